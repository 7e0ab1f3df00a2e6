import BluetoothBlueZ
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import Foundation

/// Everything that can go wrong in Bluejay, each case saying what happened. Every callback
/// and every `async` function of Bluejay reports failures as this type; its
/// ``description`` (also `localizedDescription`) is a sentence to show or log.
public enum BluejayError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    // MARK: Lifecycle

    /// ``Bluejay/start(mode:)`` has not been called, or Bluejay was stopped.
    case notStarted
    /// ``Bluejay/start(mode:)`` was called on an instance that is already running.
    case alreadyStarted
    /// Bluejay was stopped (``Bluejay/stop(completion:)`` or
    /// ``Bluejay/stopAndExtractBluetoothState()``) before the operation finished.
    case stopped
    /// The controller cannot be used: the transport could not be opened, the controller
    /// did not initialize, or the transport closed. The text says which.
    case bluetoothUnavailable(String)

    // MARK: Connection

    /// The operation needs a connected peripheral and there is none.
    case notConnected
    /// ``Bluejay/connect(_:timeout:warningOptions:completion:)`` while already connected.
    case alreadyConnected(PeripheralIdentifier)
    /// ``Bluejay/connect(_:timeout:warningOptions:completion:)`` while a connection is being made.
    case alreadyConnecting(PeripheralIdentifier)
    /// The peripheral did not answer the connection request in time.
    case connectionTimedOut(PeripheralIdentifier)
    /// The controller could not make the connection; the status is the one it reported.
    case connectionFailed(PeripheralIdentifier, HCIStatus)
    /// The link ended while the operation was queued or running. `reason` is the controller's
    /// (`nil` when the transport itself went away).
    case disconnected(PeripheralIdentifier, reason: HCIStatus?)
    /// A disconnection is already in progress.
    case alreadyDisconnecting

    // MARK: Queue

    /// Cancelled: by ``Bluejay/cancelEverything(shouldDisconnect:)``, an immediate
    /// disconnect, or the cancellation of the `Task` awaiting it.
    case cancelled
    /// The operation did not finish within its timeout (``StartOptions/operationTimeout``
    /// or the timeout passed to it); it was cancelled.
    case timedOut(operation: String, after: Duration)
    /// The peripheral stopped answering GATT requests (the 30 s ATT transaction timeout of
    /// Core 6.0, Vol 3, Part F, 3.3.3); the link was closed.
    case peripheralNotResponding

    // MARK: GATT

    /// The peripheral answered with an ATT Error Response.
    case attError(code: ATTErrorCode, operation: String, handle: UInt16)
    /// The peripheral has no such service.
    case missingService(ServiceIdentifier)
    /// The service has no such characteristic.
    case missingCharacteristic(CharacteristicIdentifier)
    /// The characteristic has no such descriptor.
    case missingDescriptor(DescriptorIdentifier)
    /// A service, characteristic or descriptor identifier holds a string that is not a UUID.
    case invalidUUID(String)
    /// The characteristic does not offer what was asked (listen on one that neither notifies
    /// nor indicates, write without response where only writes with response are allowed).
    case notSupported(String)
    /// The value is longer than one write of that type can carry.
    case valueTooLong(length: Int, maximum: Int)

    // MARK: Data

    /// The bytes could not be turned into the requested ``Receivable``.
    case deserializationFailed(type: String, data: Data, reason: String)
    /// `Foundation/Data/extract(start:length:)` was asked for bytes the data does not have.
    case dataOutOfBounds(start: Int, length: Int, count: Int)
    /// ``SynchronizedPeripheral/writeAndAssemble(writeTo:value:listenTo:expectedLength:timeoutInSeconds:completion:)``
    /// received more bytes than the expected length.
    case assembledTooMuchData(expected: Int, received: Int)

    // MARK: Scanning and listening

    /// Only one scan runs at a time.
    case multipleScanNotSupported
    /// A ``ConnectionTask`` refused the connection with an error of the app's own.
    case connectionTaskFailed(task: String, reason: String)
    /// A scan with a timeout found nothing that matched within it (LittleBluetooth's scan
    /// timeout error).
    case scanTimeout(after: Duration)
    /// The existing listen on the characteristic was installed with ``MultipleListenOption/trap``.
    case multipleListenTrapped(CharacteristicIdentifier)
    /// This listen was replaced by a newer one on the same characteristic
    /// (``MultipleListenOption/replaceable``).
    case multipleListenReplaced(CharacteristicIdentifier)

    // MARK: Background tasks

    /// A background task is running: the regular API waits until it ends, and a second
    /// background task cannot start.
    case backgroundTaskRunning
    /// The regular API was called from inside a background task: use the
    /// ``SynchronizedPeripheral`` handed to the task instead.
    case regularAPIInBackgroundTask(String)
    /// A ``SynchronizedPeripheral`` was used after its background task ended, or from another thread.
    case synchronizedPeripheralOutsideTask
    /// ``SynchronizedPeripheral/flushListen(to:nonZeroTimeout:completion:)`` needs a positive idle window.
    case indefiniteFlush

    // MARK: Restoration

    /// The restoration state could not be read or written.
    case restorationFailed(String)

    // MARK: Other

    /// An L2CAP channel could not open or closed (the peripheral's refusal, a closed link, …).
    case l2cap(L2CAPChannelError)

    /// The host stack reported something the cases above do not cover.
    case host(HostError)

    public var description: String {
        switch self {
        case .notStarted: return "Bluejay has not been started: call start(mode:) first"
        case .alreadyStarted: return "Bluejay is already started"
        case .stopped: return "Bluejay was stopped"
        case let .bluetoothUnavailable(why): return "Bluetooth is unavailable: \(why)"
        case .notConnected: return "not connected to a peripheral"
        case let .alreadyConnected(peripheral): return "already connected to \(peripheral)"
        case let .alreadyConnecting(peripheral): return "already connecting to \(peripheral)"
        case let .connectionTimedOut(peripheral): return "connecting to \(peripheral) timed out"
        case let .connectionFailed(peripheral, status): return "connecting to \(peripheral) failed: \(status)"
        case let .disconnected(peripheral, reason):
            return "disconnected from \(peripheral)" + (reason.map { ": \($0)" } ?? ": the Bluetooth transport closed")
        case .alreadyDisconnecting: return "already disconnecting"
        case .cancelled: return "cancelled"
        case let .timedOut(operation, after): return "\(operation) timed out after \(after.bluejaySeconds)"
        case .peripheralNotResponding: return "the peripheral stopped answering GATT requests; the link was closed"
        case let .attError(code, operation, handle):
            return "\(operation) failed: the peripheral answered \(code) (handle \(Hex.format(handle)))"
        case let .missingService(service): return "the peripheral has no service \(service)"
        case let .missingCharacteristic(characteristic): return "the peripheral has no characteristic \(characteristic)"
        case let .missingDescriptor(descriptor): return "the peripheral has no \(descriptor)"
        case let .invalidUUID(text): return "\"\(text)\" is not a Bluetooth UUID"
        case let .notSupported(what): return "not supported: \(what)"
        case let .valueTooLong(length, maximum): return "a value of \(length) bytes is longer than the \(maximum) bytes one write can carry"
        case let .deserializationFailed(type, data, reason):
            return "cannot make \(type) from \(data.count) byte\(data.count == 1 ? "" : "s") [\(Hex.encode(data, separator: " "))]: \(reason)"
        case let .dataOutOfBounds(start, length, count):
            return "cannot extract \(length) byte\(length == 1 ? "" : "s") at offset \(start) from \(count) byte\(count == 1 ? "" : "s")"
        case let .assembledTooMuchData(expected, received): return "expected \(expected) bytes, received \(received)"
        case .multipleScanNotSupported: return "a scan is already running; only one scan runs at a time"
        case let .connectionTaskFailed(task, reason): return "the connection task \"\(task)\" failed: \(reason)"
        case let .scanTimeout(after): return "the scan found nothing that matched within \(after.bluejaySeconds)"
        case let .multipleListenTrapped(characteristic): return "\(characteristic) is already listened to, and that listen traps new ones"
        case let .multipleListenReplaced(characteristic): return "the listen on \(characteristic) was replaced by a new one"
        case .backgroundTaskRunning: return "a background task is running"
        case let .regularAPIInBackgroundTask(call):
            return "\(call) was called inside a background task; use the SynchronizedPeripheral given to the task"
        case .synchronizedPeripheralOutsideTask: return "the SynchronizedPeripheral was used outside its background task"
        case .indefiniteFlush: return "flushListen needs a positive idle window"
        case let .restorationFailed(why): return "restoration failed: \(why)"
        case let .l2cap(error): return "\(error)"
        case let .host(error): return "\(error)"
        }
    }

    public var errorDescription: String? { description }
}

extension BluejayError {
    /// Maps any error of the stack to the case that says what happened. `peripheral` names
    /// the peer for `.disconnected` and the connection errors.
    init(_ error: any Error, peripheral: PeripheralIdentifier? = nil, operation: String = "the operation") {
        switch error {
        case let error as BluejayError:
            self = error
        case let error as HostError:
            self = BluejayError(host: error, peripheral: peripheral, operation: operation)
        case let error as ATTError:
            self = .attError(code: error.code, operation: operation, handle: error.handle)
        case let error as L2CAPChannelError:
            if case let .host(host) = error {
                self = BluejayError(host: host, peripheral: peripheral, operation: operation)
            } else {
                self = .l2cap(error)
            }
        case let error as TransportError:
            self = .bluetoothUnavailable("\(error)")
        case let error as BlueZError:
            switch error {
            case .busUnavailable, .daemonUnavailable, .accessDenied, .adapterNotFound:
                self = .bluetoothUnavailable("\(error)")
            case .unsupported:
                self = .notSupported("\(error)")
            case .refused, .unexpectedAnswer:
                self = .host(.protocolViolation("\(error)"))
            }
        case is CancellationError:
            self = .cancelled
        default:
            self = .host(.protocolViolation("\(error)"))
        }
    }

    private init(host error: HostError, peripheral: PeripheralIdentifier?, operation: String) {
        switch error {
        case let .att(att):
            self = .attError(code: att.code, operation: operation, handle: att.handle)
        case let .disconnected(reason):
            self = peripheral.map { .disconnected($0, reason: reason) } ?? .notConnected
        case let .connectionTimeout(address):
            self = .connectionTimedOut(peripheral ?? PeripheralIdentifier(address: address))
        case let .connectionFailed(address, status):
            self = .connectionFailed(peripheral ?? PeripheralIdentifier(address: address), status)
        case .cancelled:
            self = .cancelled
        case .attTransactionTimeout, .attBearerClosed:
            self = .peripheralNotResponding
        case let .transportClosed(reason):
            self = .bluetoothUnavailable(reason.map { "\($0)" } ?? "the HCI transport is closed")
        case .notPoweredOn:
            self = .bluetoothUnavailable("the controller is not powered on")
        case .scanInProgress:
            self = .multipleScanNotSupported
        case let .notFound(what):
            self = .notSupported("\(what) not found")
        default:
            self = .host(error)
        }
    }
}

extension Duration {
    /// `"1.5 s"`.
    var bluejaySeconds: String {
        let seconds = self / .seconds(1)
        let rounded = (seconds * 1000).rounded() / 1000
        return "\(rounded) s"
    }

    /// The duration in seconds, for `TimeInterval` APIs.
    var bluejayTimeInterval: TimeInterval {
        self / .seconds(1)
    }
}

