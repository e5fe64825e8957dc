import Foundation
import Trellis

print("trellis: not yet")
