import Testing

@testable import Trellis

@Suite struct SchemaTests {}
