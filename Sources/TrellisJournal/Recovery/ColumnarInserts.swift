import Foundation
import TrellisCore
import TrellisGraph

/// Recovery's reader of a change-set record's inserts section (`ChangeSetCodec`'s layout): each value goes from the
/// record straight into its column of the leaf its row belongs to, with no `Value`, row array or `String` made for it
/// in between, and each leaf is written in place, without copying its columns, for the run of inserts that fill it.
///
/// Only for a graph without indexes (`Graph.withoutIndexes`, whose indexes recovery builds once at the end): no index
/// entry is made. It refuses what `Graph.applyInserts` refuses (an unknown entity, a wrong number of values, an
/// existing object, a value of the wrong type), with the same errors, and what the decoder refuses (an unreadable
/// value, a collection not of its attribute's element type). A refused record refuses the open, so the rows written
/// before the refusal do not matter.
enum ColumnarInserts {
    static func apply(_ r: inout ByteReader, to graph: inout Graph) throws(TrellisError) {
        assert(graph.tables.allSatisfy { $0.indexes.isEmpty }, "ColumnarInserts: a graph with indexes")
        let schema = graph.schema
        // Read once: copying an entity's layout (or an attribute's description) for each insert retained its arrays.
        // A closure, not a key path: `map(\.attributes.count)` projected the key path through the runtime.
        let widths = schema.layouts.map { $0.attributes.count }
        var left = try r.count(minimumBytes: 3)
        func reject(_ message: String, _ id: ObjectID) -> TrellisError {
            TrellisError(.corrupt, "change set does not fit the graph: \(message) \(schema.describe(id))", object: id)
        }
        // The next insert's entity and serial, its values not read yet; nil after the last.
        func header() throws(TrellisError) -> (entity: Int, serial: UInt64)? {
            guard left > 0 else { return nil }
            left -= 1
            let e = try r.int(limit: widths.count - 1)
            let serial = try r.varint()
            let id = ObjectID(entity: UInt32(e), serial: serial)
            let count = try r.count()
            guard serial != 0 else {
                throw TrellisError(.corrupt, "change set names an object of unknown entity \(id)", object: id)
            }
            guard count == widths[e] else { throw reject("wrong number of values for insert of", id) }
            return (e, serial)
        }
        var next = try header()
        // A run of inserts into one leaf writes it in place (the table holds the only reference), once.
        while let first = next {
            let e = first.entity
            let key = first.serial >> Leaf.shift
            let width = widths[e]
            var added = 0
            var highest: UInt64 = 0
            try graph.tables[e].modifyLeaf(key, layout: schema.layouts[e]) { (leaf: inout Leaf) throws(TrellisError) in
                while let insert = next, insert.entity == e, insert.serial >> Leaf.shift == key {
                    let id = ObjectID(entity: UInt32(e), serial: insert.serial)
                    let row = Int(insert.serial & Leaf.mask)
                    let bit: UInt64 = 1 << UInt64(row)
                    guard leaf.present & bit == 0 else {
                        throw reject("insert of an existing object or a value of the wrong type:", id)
                    }
                    let fits = try leaf.columns.withUnsafeMutableBufferPointer {
                        columns throws(TrellisError) -> Bool in
                        for c in 0..<width {
                            guard
                                try read(
                                    &r, into: &columns[c], row: row, bit: bit, schema: schema, entity: e, attribute: c)
                            else { return false }
                        }
                        return true
                    }
                    guard fits else { throw reject("insert of an existing object or a value of the wrong type:", id) }
                    leaf.present |= bit
                    added += 1
                    highest = max(highest, insert.serial)
                    next = try header()
                }
                // A leaf the run filled is finished, as a checkpoint load finishes each (a partly filled one would
                // widen again at its next insert).
                if leaf.present == .max { leaf.narrowInts() }
            }
            graph.tables[e].count += added
            graph.tables[e].maxSerial = max(graph.tables[e].maxSerial, highest)
        }
    }

    /// Reads one value into row `row` of `column` (a row no object holds, so nothing of an earlier one is left in it:
    /// a delete clears its row); false, when the value's case does not fit the column, as `Column.set` refuses it.
    @inline(__always)
    private static func read(
        _ r: inout ByteReader, into column: inout Column, row: Int, bit: UInt64, schema: Schema, entity: Int,
        attribute: Int
    ) throws(TrellisError) -> Bool {
        let tag = try r.u8()
        switch (column.kind, tag) {
        case (_, ValueTag.null.rawValue):
            column.nulls |= bit
            return true
        case (.bool, ValueTag.boolFalse.rawValue): column.bits &= ~bit
        case (.bool, ValueTag.boolTrue.rawValue): column.bits |= bit
        case (.int, ValueTag.int.rawValue): column.setInt(row, try r.signed())
        case (.double, ValueTag.double.rawValue), (.date, ValueTag.date.rawValue):
            column.doubles[row] = Double(bitPattern: try r.u64())
        case (.string, ValueTag.string.rawValue):
            try r.withString { column.strings.set(row, utf8: $0) }
        default:
            let v = try r.value(tag: tag)
            switch (column.kind, v) {
            case (.other, .data), (.other, .uuid), (.other, .url), (.other, .decimal): break
            case (.list, .list):
                let type = schema.layouts[entity].attributes[attribute].type
                // As the decoder checks it: a collection's elements of its attribute's element type.
                guard type.normalized(v)?.isIdentical(to: v) == true else {
                    throw r.failure("a \(v) for \(type) attribute")
                }
            default: return false
            }
            column.others[row] = v
        }
        column.nulls &= ~bit
        return true
    }
}
