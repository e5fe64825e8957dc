import Foundation
import Trellis

print("trellis-bench: not yet")
