// Bluejay 0.8.4's background restoration set-up. What a port changes: there is no UIKit
// (`application(_:didFinishLaunchingWithOptions:)` becomes the program's start-up, without
// launch options), and the test gives the state directory and the controller.
import Bluejay
import Foundation

final class AppDelegate: @unchecked Sendable { // port: no UIResponder; @unchecked Sendable (Bluejay's restorers are Sendable)

    let bluejay = Bluejay()

    func application(directory: URL, transport: TransportProvider) -> Bool { // port: no UIApplication
        // Override point for customization after application launch.
        let backgroundRestoreConfig = BackgroundRestoreConfig(
            restoreIdentifier: "com.steamclock.bluejayHeartSensorDemo",
            backgroundRestorer: self,
            listenRestorer: self,
            directory: directory) // port: no launchOptions; the test's state directory

        let backgroundRestoreMode = BackgroundRestoreMode.enable(backgroundRestoreConfig)

        let options = StartOptions(
          enableBluetoothAlert: true,
          backgroundRestore: backgroundRestoreMode,
          transport: transport) // port: the controller to use

        bluejay.start(mode: .new(options))

        return true
    }
}

extension AppDelegate: BackgroundRestorer {
    func didRestoreConnection(
      to peripheral: PeripheralIdentifier) -> BackgroundRestoreCompletion {
        // Opportunity to perform syncing related logic here.
        return .continue
    }

    func didFailToRestoreConnection(
      to peripheral: PeripheralIdentifier, error: Error) -> BackgroundRestoreCompletion {
        // Opportunity to perform cleanup or error handling logic here.
        return .continue
    }
}

extension AppDelegate: ListenRestorer {
    func didReceiveUnhandledListen(
      from peripheral: PeripheralIdentifier,
      on characteristic: CharacteristicIdentifier,
      with value: Data?) -> ListenRestoreAction {
        // Re-install or defer installing a callback to a notifying characteristic.
        return .promiseRestoration
    }
}
