#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a virtual device is, in metres on a plane.
public struct VirtualPosition: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public static let origin = VirtualPosition(x: 0, y: 0)

    /// The distance to `other`, in metres.
    public func distance(to other: VirtualPosition) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }

    public var description: String { "(\(x) m, \(y) m)" }
}

/// How signals weaken between two devices of a ``VirtualLink``: a log-distance path loss
/// model, free space by default.
///
///     path loss (dB) = referenceLoss + 10 · exponent · log10(distance / 1 m)
///     RSSI (dBm)     = sender's TX power − path loss
///
/// A packet is received when its RSSI is at least the receiver's sensitivity and, if
/// ``maximumRange`` is set, the devices are no further apart than that. A path loss set
/// explicitly for a pair of devices (``VirtualLink/setPathLoss(between:and:to:)``) replaces
/// the model for that pair.
public struct RadioModel: Sendable, Equatable {
    /// The loss at 1 m. 40 dB is free space at 2.44 GHz: 20·log10(4π · 1 m / 12.3 cm).
    public var referenceLoss: Double = 40
    /// 2 in free space; 2.5 to 4 indoors.
    public var exponent: Double = 2
    /// Devices closer than this are treated as this far apart (the model diverges at 0 m).
    public var minimumDistance: Double = 0.1
    /// A hard cut-off distance in metres, beyond which nothing is received; `nil` for none.
    public var maximumRange: Double?

    public init(referenceLoss: Double = 40, exponent: Double = 2, minimumDistance: Double = 0.1, maximumRange: Double? = nil) {
        self.referenceLoss = referenceLoss
        self.exponent = exponent
        self.minimumDistance = minimumDistance
        self.maximumRange = maximumRange
    }

    /// The path loss over `distance` metres, in dB.
    public func pathLoss(distance: Double) -> Double {
        let clamped = max(minimumDistance, distance.isFinite ? distance : Double.greatestFiniteMagnitude)
        return referenceLoss + 10 * exponent * log10(clamped)
    }

    /// The distance at which the path loss reaches `loss` dB: the range for a link budget.
    public func distance(forPathLoss loss: Double) -> Double {
        pow(10, (loss - referenceLoss) / (10 * exponent))
    }
}

/// One direction of radio contact between two devices, as the link computes it.
struct RadioReception: Sendable, Equatable {
    /// dBm at the receiver.
    var rssi: Double
    var isReceived: Bool

    /// The RSSI as HCI reports it: whole dBm, -127...20.
    var reportedRSSI: Int8 {
        Int8(max(-127, min(20, rssi.rounded())))
    }
}
