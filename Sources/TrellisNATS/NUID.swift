/// Random 22-character base-62 names, unique in practice: the inboxes' and the object store's ids.
enum NUID {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    static func next() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<22).map { _ in alphabet[Int(generator.next(upperBound: UInt8(62)))] })
    }
}
