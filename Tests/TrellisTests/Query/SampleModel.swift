import Foundation
import Trellis

/// The model of the planner tests: indexed and unindexed attributes of each kind, an optional indexed attribute, a
/// unique attribute and a compound index on (g, h).
final class Sample: Model {
    @Attribute(.indexed) var a = 0
    @Attribute var b = 0
    @Attribute(.indexed) var s = ""
    @Attribute var d = 0.0
    @Attribute var flag = false
    @Attribute(.indexed) var opt: Int?
    @Attribute var g = 0
    @Attribute var h = 0
    @Attribute(.unique) var code = 0

    override class var indexes: [ModelIndex] { [.index(\Sample.g, \Sample.h)] }
}

/// The same values in a plain struct, for brute-force filtering with Foundation's own predicate evaluation.
struct PlainSample {
    var id: ObjectID
    var a: Int
    var b: Int
    var s: String
    var d: Double
    var flag: Bool
    var opt: Int?
    var g: Int
    var h: Int
    var code: Int
}

extension PlainSample {
    static func random(_ id: ObjectID, code: Int, _ rng: inout SeededRandom) -> PlainSample {
        PlainSample(
            id: id, a: Int.random(in: 0..<100, using: &rng), b: Int.random(in: 0..<10, using: &rng),
            s: "k\(Int.random(in: 0..<50, using: &rng))", d: Double(Int.random(in: 0..<1000, using: &rng)) / 10,
            flag: Bool.random(using: &rng),
            opt: Int.random(in: 0..<5, using: &rng) == 0 ? nil : Int.random(in: 0..<20, using: &rng),
            g: Int.random(in: 0..<10, using: &rng), h: Int.random(in: 0..<100, using: &rng), code: code)
    }

    /// Writes these values into a model object.
    func apply(to sample: Sample) {
        sample.a = a
        sample.b = b
        sample.s = s
        sample.d = d
        sample.flag = flag
        sample.opt = opt
        sample.g = g
        sample.h = h
        sample.code = code
    }
}
