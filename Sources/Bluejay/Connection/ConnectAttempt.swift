import BluetoothHost

/// Connects through the host with a deadline Bluejay keeps itself: the caller hears
/// ``BluejayError/connectionTimedOut(_:)`` when the timeout passes (plus a 100 ms grace for
/// the controller's own answer), and ``BluejayError/cancelled`` as soon as its task is
/// cancelled, even if the controller is slow to report the end of the abandoned attempt
/// (Bumble's virtual controller never does; the host then waits 2 s). A connection that
/// comes up after the caller was answered is closed at once.
func connectWithDeadline(host: LEHost, to peripheral: PeripheralIdentifier, timeout: Timeout) async throws(BluejayError) -> Connection {
    let outcome = FirstOutcome<Connection>()
    let attempt = Task {
        do {
            let connection = try await host.connect(to: peripheral.address, timeout: timeout.duration)
            if !outcome.deliver(.success(connection)) { try? await connection.disconnect() }
        } catch {
            outcome.deliver(.failure(BluejayError(error, peripheral: peripheral, operation: "connecting to \(peripheral)")))
        }
    }
    let deadline = timeout.duration.map { limit in
        Task {
            guard await sleepUnlessCancelled(limit + .milliseconds(100)) else { return }
            if outcome.deliver(.failure(.connectionTimedOut(peripheral))) { attempt.cancel() }
        }
    }
    defer { deadline?.cancel() }
    let result = await withTaskCancellationHandler {
        await outcome.wait()
    } onCancel: {
        if outcome.deliver(.failure(.cancelled)) { attempt.cancel() }
    }
    return try result.get()
}
