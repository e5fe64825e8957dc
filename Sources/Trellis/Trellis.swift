// The umbrella module: apps write `import Trellis` and see the public API of every layer.
@_exported import TrellisCore
@_exported import TrellisGraph
@_exported import TrellisJournal
@_exported import TrellisStore
