import BluetoothTransport
import Foundation

/// Where ``Bluejay/start(mode:)`` finds its controller.
public enum TransportProvider: Sendable {
    /// `$BLUEJAY_HCI` when set (a transport string such as `tcp:127.0.0.1:9000`, `hci0`,
    /// `serial:/dev/ttyACM0`), else the in-process virtual controller. The default.
    case environment
    /// A transport string, as `TransportSpecification(parsing:)` reads it.
    case specification(String)
    /// A transport already opened (not started: the host starts it).
    case transport(any HCITransport)
    /// Opens a transport when Bluejay starts: the injection point for controllers that
    /// live in higher layers or in tests.
    case factory(@Sendable () throws -> any HCITransport)

    /// The environment variable ``environment`` reads.
    public static let environmentVariable = "BLUEJAY_HCI"

    /// What Bluejay runs on: an HCI transport for our host, or BlueZ's adapter.
    enum Backend {
        case transport(any HCITransport)
        /// `bluez` or `bluez:hciN`: BlueZ keeps the adapter.
        case blueZ(adapter: String?)
    }

    /// The backend this provider names: `bluez` and `bluez:hciN` name BlueZ, anything else a
    /// transport that is opened here (see ``open(environment:virtualController:)``).
    func backend(environment: [String: String] = ProcessInfo.processInfo.environment,
                 virtualController: (String?) throws(BluejayError) -> any HCITransport = InProcessRadio.openTransport
    ) throws(BluejayError) -> Backend {
        let text: String?
        switch self {
        case let .specification(specification): text = specification
        case .environment: text = environment[Self.environmentVariable]?.trimmingCharacters(in: .whitespaces)
        case .transport, .factory: text = nil
        }
        if let text, let specification = try? TransportSpecification(parsing: text), case let .bluez(adapter) = specification {
            return .blueZ(adapter: adapter)
        }
        return .transport(try open(environment: environment, virtualController: virtualController))
    }

    /// Opens the transport. `virtualController` opens the in-process virtual controller
    /// (`virtual` or `virtual:NAME`).
    func open(environment: [String: String] = ProcessInfo.processInfo.environment,
              virtualController: (String?) throws(BluejayError) -> any HCITransport = InProcessRadio.openTransport
    ) throws(BluejayError) -> any HCITransport {
        let text: String
        switch self {
        case let .transport(transport):
            return transport
        case let .factory(factory):
            do { return try factory() } catch { throw BluejayError(error) }
        case let .specification(specification):
            text = specification
        case .environment:
            guard let value = environment[Self.environmentVariable]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                return try virtualController(nil)
            }
            text = value
        }
        let specification: TransportSpecification
        do {
            specification = try TransportSpecification(parsing: text)
        } catch {
            throw .bluetoothUnavailable("\(error)")
        }
        if case let .virtual(name) = specification { return try virtualController(name) }
        if case .bluez = specification {
            throw .bluetoothUnavailable("\(text) names the BlueZ backend, not an HCI transport: Bluejay and BluejayCentral.open run on it themselves")
        }
        do {
            return try SystemTransports.open(specification)
        } catch {
            throw .bluetoothUnavailable("\(error)")
        }
    }
}
