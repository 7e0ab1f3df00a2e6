import BluetoothCore
import BluetoothHost
import BluetoothVirtual

extension UARTDevice {
    /// The Nordic UART Service.
    public static let serviceUUID: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    /// RX: centrals write here (with or without response).
    public static let rxUUID: BluetoothUUID = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
    /// TX: answers are notified here.
    public static let txUUID: BluetoothUUID = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"

    /// How answers are cut into notifications. Every chunk is also cut to what one
    /// notification carries (ATT_MTU − 3).
    public enum Chunking: Sendable, Hashable {
        /// As large as one notification carries.
        case maximum
        /// This many bytes each (the last one shorter).
        case fixed(Int)
        /// Sizes drawn from `sizes`, the same sequence for the same seed.
        case random(ClosedRange<Int>, seed: UInt64)
    }

    /// What a write is answered with.
    public enum Responder: Sendable {
        /// The bytes written.
        case echo
        /// Whatever the closure returns for the bytes written; `nil` or empty: no answer.
        case script(@Sendable ([UInt8]) async -> [UInt8]?)
    }

    /// How a ``UARTDevice`` looks and behaves.
    public struct Configuration: Sendable {
        /// The advertised local name.
        public var name = "Bluejay UART"
        /// `nil` derives one from the name.
        public var address: BluetoothAddress?
        /// How answers are cut into notifications.
        public var chunking: Chunking
        /// What a write is answered with.
        public var responder: Responder
        /// Waits this long before each chunk.
        public var chunkDelay: Duration = .zero
        /// How many answers may wait to be sent (behind the one being sent): a central that
        /// writes faster than the answers go out (or never reads them) must not make the
        /// device's memory grow without bound. Past it the newest answer is dropped and counted
        /// in ``UARTDevice/droppedAnswers``; the answers kept go out in order. Default 256.
        public var answerBufferLimit = 256
        /// Time between advertising events.
        public var advertisingInterval: Duration = .milliseconds(100)
        /// On a virtual link, in metres.
        public var position = VirtualPosition(x: 1, y: 0)

        /// An echo (or scripted) device with the given chunking.
        public init(name: String = "Bluejay UART", chunking: Chunking = .maximum, responder: Responder = .echo) {
            self.name = name
            self.chunking = chunking
            self.responder = responder
        }
    }

    /// The device as a ``SimulatedPeripheral``: the UART service with RX (write, write
    /// without response, up to 512 bytes) and TX (notify).
    public static func declaration(_ configuration: Configuration) -> SimulatedPeripheral {
        let service = SimulatedService(uuid: serviceUUID, characteristics: [
            SimulatedCharacteristic(uuid: rxUUID, properties: [.write, .writeWithoutResponse]),
            SimulatedCharacteristic(uuid: txUUID, properties: [.notify]),
        ])
        return SimulatedPeripheral(name: configuration.name, address: configuration.address, advertisingInterval: configuration.advertisingInterval,
                                   services: [service], position: configuration.position)
    }
}

/// Cuts answers into chunk sizes as a ``UARTDevice/Chunking`` says. A plain value.
struct ChunkSizer: Sendable {
    let chunking: UARTDevice.Chunking
    private var generator: SeededRandomNumberGenerator

    init(_ chunking: UARTDevice.Chunking) {
        self.chunking = chunking
        if case let .random(_, seed) = chunking {
            generator = SeededRandomNumberGenerator(seed: seed)
        } else {
            generator = SeededRandomNumberGenerator(seed: 0)
        }
    }

    /// The chunks of `bytes`, none longer than `maximum` (at least 1).
    mutating func split(_ bytes: [UInt8], maximum: Int) -> [[UInt8]] {
        let limit = max(1, maximum)
        var chunks: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            let size: Int
            switch chunking {
            case .maximum: size = limit
            case let .fixed(fixed): size = min(limit, max(1, fixed))
            case let .random(sizes, _):
                let low = max(1, min(limit, sizes.lowerBound))
                let high = max(low, min(limit, sizes.upperBound))
                size = Int.random(in: low...high, using: &generator)
            }
            let end = min(bytes.count, start + size)
            chunks.append(Array(bytes[start..<end]))
            start = end
        }
        return chunks
    }
}
