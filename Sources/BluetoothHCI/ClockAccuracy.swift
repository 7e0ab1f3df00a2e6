/// The sleep clock accuracy of the central (Core 6.0, Vol 4, Part E, 7.7.65.1,
/// Central_Clock_Accuracy; Vol 6, Part B, 2.3.3.1).
public enum ClockAccuracy: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case ppm500 = 0x00
    case ppm250 = 0x01
    case ppm150 = 0x02
    case ppm100 = 0x03
    case ppm75 = 0x04
    case ppm50 = 0x05
    case ppm30 = 0x06
    case ppm20 = 0x07

    /// The worst-case accuracy in parts per million.
    public var partsPerMillion: Int {
        switch self {
        case .ppm500: return 500
        case .ppm250: return 250
        case .ppm150: return 150
        case .ppm100: return 100
        case .ppm75: return 75
        case .ppm50: return 50
        case .ppm30: return 30
        case .ppm20: return 20
        }
    }

    public var description: String { "\(partsPerMillion) ppm" }
}
