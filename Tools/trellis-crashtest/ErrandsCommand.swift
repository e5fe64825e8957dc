import Foundation
import Trellis

/// A model whose attributes are enums as SwiftData users declare them: a raw value and no other conformance.
/// `EnumAttributeTests` declares the same `Errand` in the test process.
final class Errand: Model {
    enum Mood: String {
        case calm, busy, frantic
    }

    enum Size: Int {
        case small = 1
        case large = 3
    }

    @Attribute var title = ""
    @Attribute var mood = Mood.calm
    @Attribute var size: Size?
}

enum ErrandsCommand {
    /// One line per errand: `errand <title>\t<mood's raw value>\t<size's raw value, or nil>`.
    static func line(_ errand: Errand) -> String {
        "errand \(errand.title)\t\(errand.mood.rawValue)\t\(errand.size.map { String($0.rawValue) } ?? "nil")"
    }

    /// Opens the store of errands in `directory` (creating it), saves one more errand when `adding` is
    /// `title,mood,size` (an empty size is nil), then prints every errand in serial order.
    static func run(directory: URL, adding: String?) throws {
        let store = try Store(directory: directory, models: [Errand.self])
        let context = ModelContext(store)
        if let adding {
            let fields = adding.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, let mood = Errand.Mood(rawValue: fields[1]) else {
                throw UsageError("--add needs title,mood,size")
            }
            let errand = Errand()
            errand.title = fields[0]
            errand.mood = mood
            errand.size = Int(fields[2]).flatMap(Errand.Size.init(rawValue:))
            context.insert(errand)
            try context.save()
        }
        let errands = try context.fetch(FetchDescriptor<Errand>()).sorted { $0.objectID! < $1.objectID! }
        for errand in errands { say(line(errand)) }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}
