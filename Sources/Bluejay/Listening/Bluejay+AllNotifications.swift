import BluetoothHost
import Foundation

extension Bluejay {
    /// Every value of every listened characteristic, with its characteristic, from now on,
    /// whichever listen takes it (LittleBluetooth's stream of all notifications), in order for
    /// each characteristic. Listening to it does not subscribe to anything. The stream
    /// holds at most ``listenBufferLimit`` values its consumer has not taken (past that the
    /// oldest are dropped) and ends when the consumer stops iterating.
    public func notifications() -> AsyncStream<CharacteristicNotification> {
        notificationListeners.makeStream()
    }

    /// Adds a ``NotificationObserver`` (held weakly).
    public func register(notificationObserver: any NotificationObserver) {
        state.withLock { $0.notificationObservers.add(notificationObserver) }
    }

    public func unregister(notificationObserver: any NotificationObserver) {
        state.withLock { $0.notificationObservers.remove(notificationObserver) }
    }

    /// Hands one batch of a characteristic's values to the stream of all notifications and
    /// to the observers (on `queue`).
    func publishNotifications(_ values: [Data], on characteristic: CharacteristicIdentifier, from peripheral: PeripheralIdentifier,
                              observers: [any NotificationObserver], queue: DispatchQueue) {
        let hasStreams = !notificationListeners.isEmpty
        guard hasStreams || !observers.isEmpty else { return }
        let notifications = values.map { CharacteristicNotification(peripheral: peripheral, characteristic: characteristic, value: $0) }
        if hasStreams {
            for notification in notifications { notificationListeners.yield(notification) }
        }
        if !observers.isEmpty {
            queue.async {
                for notification in notifications {
                    for observer in observers { observer.didReceiveNotification(notification) }
                }
            }
        }
    }
}
