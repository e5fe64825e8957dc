import Foundation
import Testing
import Trellis

/// An expense with an exact amount: money is what `Decimal` is for.
final class Expense: Model {
    @Attribute var label = ""
    @Attribute var amount = Decimal(0)
    @Attribute var tip: Decimal?
}

/// Issue 16, item 1: `sum` and `average` of a `Decimal` attribute were 0 (the accumulator read each value as a
/// double, and a decimal has none), while min, max, sort and predicates were right. They are now exact decimals.
@Suite struct DecimalAggregateTests {
    @Test func sumAndAverageOfDecimalsAreExactDecimals() throws {
        let store = try Store(models: [Expense.self])
        let context = ModelContext(store)
        for (label, amount) in [("milk", "12.50"), ("bread", "7.25"), ("gum", "0.10")] {
            let expense = Expense()
            expense.label = label
            expense.amount = Decimal(string: amount)!
            context.insert(expense)
        }
        let fourth = Expense()
        fourth.label = "coffee"
        fourth.amount = Decimal(string: "0.05")!
        fourth.tip = Decimal(string: "0.3")!
        context.insert(fourth)
        try context.save()
        let rows = try context.aggregate(
            FetchDescriptor<Expense>(),
            [.sum(\.amount), .average(\.amount), .sum(\.tip), .average(\.tip), .max(\.amount)])
        #expect(rows.count == 1)
        // 12.50 + 7.25 + 0.10 + 0.05 = 19.90, exactly (as a double, 0.1 + 0.05 is not 0.15).
        #expect(rows[0]["sum(amount)"] == .decimal(Decimal(string: "19.9")!))
        #expect(rows[0]["average(amount)"] == .decimal(Decimal(string: "4.975")!))
        // Nulls are left out, as for other types: one tip of 0.3.
        #expect(rows[0]["sum(tip)"] == .decimal(Decimal(string: "0.3")!))
        #expect(rows[0]["average(tip)"] == .decimal(Decimal(string: "0.3")!))
        #expect(rows[0]["max(amount)"] == .decimal(Decimal(string: "12.5")!))
    }

    @Test func aSumOfNoDecimalsIsZeroAndTheirAverageNull() throws {
        let store = try Store(models: [Expense.self])
        let context = ModelContext(store)
        let rows = try context.aggregate(
            FetchDescriptor<Expense>(predicate: #Predicate { $0.label == "none" }), [.sum(\.tip), .average(\.tip)])
        #expect(rows[0]["sum(tip)"] == .int(0))
        #expect(rows[0]["average(tip)"] == .null)
    }
}
