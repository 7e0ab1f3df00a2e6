import ArgumentParser
import Bluejay
import BluetoothSimulator

/// Failures of the commands built on the Bluejay API and the simulator, reported like
/// ``CLIError``s: a sentence on stderr and the exit code of the same family.
struct BluejayFailure: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32

    /// 69 not found or not connectable, 75 timeout, 65 ATT error, 74 controller unavailable, 1 other.
    init(_ error: BluejayError) {
        description = error.description
        switch error {
        case .connectionTimedOut, .missingService, .missingCharacteristic, .missingDescriptor: exitCode = 69
        case .timedOut, .peripheralNotResponding: exitCode = 75
        case .attError: exitCode = 65
        case .bluetoothUnavailable: exitCode = 74
        default: exitCode = 1
        }
    }

    init(_ error: SimulatorError) {
        description = error.description
        switch error {
        case let .peripheral(.host(.transportClosed(reason))):
            description = "the controller went away: \(reason.map { "\($0)" } ?? "transport closed")"
            exitCode = 74
        case .timedOut: exitCode = 75
        default: exitCode = 1
        }
    }

    init(_ description: String, exitCode: Int32) {
        self.description = description
        self.exitCode = exitCode
    }
}

/// Runs a command body; Bluejay and simulator errors become a message and their exit code,
/// anything else is reported by ``runReportingErrors(_:)``.
func runReportingBluejayErrors(_ body: () async throws -> Void) async throws {
    let failure: BluejayFailure
    do {
        try await body()
        return
    } catch let error as BluejayError {
        failure = BluejayFailure(error)
    } catch let error as SimulatorError {
        failure = BluejayFailure(error)
    } catch let error as BluejayFailure {
        failure = error
    } catch {
        Console.endLiveLine()
        try await runReportingErrors { throw error }
        return
    }
    Console.endLiveLine()
    Output.error("bluejay: \(failure)")
    throw ExitCode(failure.exitCode)
}
