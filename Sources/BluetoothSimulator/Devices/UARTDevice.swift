import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import BluetoothVirtual
import Logging
import Synchronization

/// A simulated UART-style device (Nordic UART Service): each write to RX is answered on TX,
/// cut into notifications of fixed or random sizes, with an echo or a scripted responder.
/// Answers go to the central that wrote, after its write, one answer after the other.
///
/// ```swift
/// let uart = try await simulator.addUARTDevice(.init(chunking: .random(1...20, seed: 3), responder: .script { command in
///     command == Array("ID?".utf8) ? Array("BLUEJAY-UART-0001".utf8) : nil
/// }))
/// ```
public final class UARTDevice: Sendable {
    /// The peripheral underneath.
    public let device: SimulatedDevice
    /// What it was started with.
    public let configuration: Configuration
    private let state: Mutex<State>
    private let answers: AsyncStream<Answer>.Continuation

    /// An answer to send: its bytes, to whom.
    private struct Answer: Sendable {
        var central: Central
        var bytes: [UInt8]
    }

    private struct State {
        var sizer: ChunkSizer
        var received: [[UInt8]] = []
        var answeredChunkSizes: [[Int]] = []
        var unsent = 0
        var dropped = 0
    }

    init(device: SimulatedDevice, configuration: Configuration) {
        self.device = device
        self.configuration = configuration
        state = Mutex(State(sizer: ChunkSizer(configuration.chunking)))
        let (stream, continuation) = AsyncStream.makeStream(of: Answer.self,
                                                            bufferingPolicy: .bufferingOldest(max(1, configuration.answerBufferLimit)))
        answers = continuation
        let writes = device.events()
        // Writes to RX become answers, in order.
        device.own(Task { [weak self] in
            for await event in writes {
                guard case let .written(central, uuid, value, _, .success) = event, uuid == Self.rxUUID, let self else { continue }
                self.state.withLock { $0.received.append(value) }
                let answer: [UInt8]?
                switch self.configuration.responder {
                case .echo: answer = value
                case let .script(respond): answer = await respond(value)
                }
                if let answer, !answer.isEmpty, case .dropped = self.answers.yield(Answer(central: central, bytes: answer)) {
                    let dropped = self.state.withLock { state in
                        state.dropped += 1
                        return state.dropped
                    }
                    let limit = self.configuration.answerBufferLimit
                    self.device.logger.warning("UART answer of \(answer.count) bytes to \(central) dropped (\(limit) waiting): \(dropped) so far")
                }
            }
            self?.answers.finish()
        })
        // One answer at a time, chunk after chunk.
        device.own(Task { [weak self] in
            for await answer in stream {
                await self?.send(answer)
            }
        })
    }

    /// Starts a UART device on a new controller of `link`.
    public static func start(on link: VirtualLink, configuration: Configuration = Configuration(),
                             logger: Logger = Logger(label: "bluejay.simulator")) async throws(SimulatorError) -> UARTDevice {
        UARTDevice(device: try await SimulatedDevice.start(declaration(configuration), on: link, logger: logger), configuration: configuration)
    }

    /// Starts a UART device on any controller.
    public static func start(transport: any HCITransport, configuration: Configuration = Configuration(),
                             logger: Logger = Logger(label: "bluejay.simulator")) async throws(SimulatorError) -> UARTDevice {
        UARTDevice(device: try await SimulatedDevice.start(declaration(configuration), transport: transport, logger: logger),
                   configuration: configuration)
    }

    /// Stops answering and the peripheral.
    public func stop() async {
        stopAnswering()
        await device.stop()
    }

    /// Every value written to RX so far, in order.
    public var received: [[UInt8]] { state.withLock { $0.received } }

    /// The chunk sizes of each answer sent so far.
    public var answeredChunkSizes: [[Int]] { state.withLock { $0.answeredChunkSizes } }

    /// Answers that could not be sent (the central had not subscribed to TX, or left).
    public var unsentAnswers: Int { state.withLock { $0.unsent } }

    /// Answers dropped because ``Configuration/answerBufferLimit`` answers were waiting.
    public var droppedAnswers: Int { state.withLock { $0.dropped } }

    func stopAnswering() {
        answers.finish()
    }

    private func send(_ answer: Answer) async {
        let maximum = await device.mtu(of: answer.central) - 3
        let chunks = state.withLock { $0.sizer.split(answer.bytes, maximum: maximum) }
        do {
            for chunk in chunks {
                if configuration.chunkDelay > .zero { try await device.clock.sleep(for: configuration.chunkDelay) }
                try await device.notify(chunk, on: Self.txUUID, to: answer.central)
            }
            state.withLock { $0.answeredChunkSizes.append(chunks.map(\.count)) }
        } catch {
            device.logger.warning("UART answer of \(answer.bytes.count) bytes to \(answer.central) not sent: \(error)")
            state.withLock { $0.unsent += 1 }
        }
    }
}
