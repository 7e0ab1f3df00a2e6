// The app of the seeds: Bluejay 0.8.4's README snippets, in the class an iOS app would hold
// them in. What a port changed is marked `// port:`; everything else is as printed there
// (with the string interpolations' backslashes, which the seed's page lost).
import Bluejay
import Foundation

/// The seeds' view controller, minus UIKit. Bluejay calls its observer methods on the
/// callback queue only; its state is confined to that queue and the test's reads after
/// waiting, which `@unchecked Sendable` states (Bluejay's observer protocols are `Sendable`).
final class HeartSensorController: ConnectionObserver, DisconnectHandler, ServiceObserver, @unchecked Sendable { // port: @unchecked Sendable
    let bluejay: Bluejay
    /// Where Bluejay calls back (given at start): the main thread of an iOS app.
    let queue = DispatchQueue(label: "seed.app")
    var discoveries: [ScanDiscovery] = []
    var heartRate: HeartRateMeasurement?
    var sensorLocationText: String?
    var enteredPassword: String?
    var firmware: String?

    init(bluejay: Bluejay) {
        self.bluejay = bluejay
    }

    // MARK: Bluetooth Events

    func bluetoothAvailable(_ available: Bool) {
        debugPrint("bluetooth available: \(available)")
    }

    func connected(to peripheral: PeripheralIdentifier) {
        debugPrint("connected to \(peripheral.description)")
    }

    func disconnected(from peripheral: PeripheralIdentifier) {
        debugPrint("disconnected from \(peripheral.description)")
    }

    // MARK: Disconnect Handler

    func didDisconnect(
      from peripheral: PeripheralIdentifier,
      with error: Error?,
      willReconnect autoReconnect: Bool) -> AutoReconnectMode {
        debugPrint("handler: \(error == nil ? "expected" : "unexpected: \(String(describing: error))") willReconnect=\(autoReconnect)")
        return .change(shouldAutoReconnect: false)
    }

    // MARK: Monitor Peripheral Services

    func didModifyServices(
      from peripheral: PeripheralIdentifier,
      invalidatedServices: [ServiceIdentifier]) {
        debugPrint("services modified: \(invalidatedServices)")
    }

    // MARK: Scanning

    func scan() {
        bluejay.scan(
            serviceIdentifiers: [heartRateService],
            discovery: { [weak self] (discovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                weakSelf.discoveries = discoveries

                return .continue
            },
            stopped: { (discoveries, error) in
                if let error = error {
                    debugPrint("Scan stopped with error: \(error.localizedDescription)")
                }
                else {
                    debugPrint("Scan stopped without error.")
                }
            })
    }

    /// ScanAction's `connect` in the README's two-argument form.
    func scanAndConnect() {
        bluejay.scan(
            serviceIdentifiers: [heartRateService],
            discovery: { (discovery, discoveries) -> ScanAction in
                return .connect(discovery, { result in
                    switch result {
                    case .success(let peripheral):
                        debugPrint("Scan connected to \(peripheral.description)")
                    case .failure(let error):
                        debugPrint("Scan connect failed: \(error.localizedDescription)")
                    }
                })
            },
            stopped: { (discoveries, error) in
                debugPrint("Scan stopped \(error == nil ? "without error." : "with an error.")")
            })
    }

    func monitor() {
        bluejay.scan(
            duration: 15,
            allowDuplicates: true,
            serviceIdentifiers: nil,
            discovery: { [weak self] (discovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                weakSelf.discoveries = discoveries

                return .continue
            },
            expired: { [weak self] (lostDiscovery, discoveries) -> ScanAction in
                guard let weakSelf = self else {
                    return .stop
                }

                debugPrint("Lost discovery: \(lostDiscovery)")

                weakSelf.discoveries = discoveries

                return .continue
        }) { (discoveries, error) in
                if let error = error {
                    debugPrint("Monitor stopped with error: \(error.localizedDescription)")
                }
                else {
                    debugPrint("Monitor stopped without error.")
                }
        }
    }

    // MARK: Connecting

    func connect(_ selectedSensor: PeripheralIdentifier) {
        bluejay.connect(selectedSensor, timeout: .seconds(15)) { result in
            switch result {
            case .success:
                debugPrint("Connection attempt to: \(selectedSensor.description) is successful")
            case .failure(let error):
                debugPrint("Failed to connect with error: \(error.localizedDescription)")
            }
        }
    }

    // MARK: Disconnect

    func cancelButKeepConnection() {
        bluejay.cancelEverything(shouldDisconnect: false)
    }

    func disconnectNow() {
        bluejay.disconnect(immediate: true)
    }

    // MARK: Reading, writing, listening

    func readSensorLocation() {
        let heartRateService = ServiceIdentifier(uuid: "180D")
        let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)

        bluejay.read(from: sensorLocation) { [weak self] (result: ReadResult<UInt8>) in
            guard let weakSelf = self else {
                return
            }

            switch result {
            case .success(let location):
                debugPrint("Read from sensor location is successful: \(location)")

                var locationString = "Unknown"

                switch location {
                case 0:
                    locationString = "Other"
                case 1:
                    locationString = "Chest"
                case 2:
                    locationString = "Wrist"
                case 3:
                    locationString = "Finger"
                case 4:
                    locationString = "Hand"
                case 5:
                    locationString = "Ear Lobe"
                case 6:
                    locationString = "Foot"
                default:
                    locationString = "Unknown"
                }

                weakSelf.sensorLocationText = locationString // port: sensorLocationCell.detailTextLabel?.text
            case .failure(let error):
                debugPrint("Failed to read sensor location with error: \(error.localizedDescription)")
            }
        }
    }

    func writeSensorLocation() {
        let heartRateService = ServiceIdentifier(uuid: "180D")
        let sensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)

        bluejay.write(to: sensorLocation, value: UInt8(2)) { result in
            switch result {
            case .success:
                debugPrint("Write to sensor location is successful.")
            case .failure(let error):
                debugPrint("Failed to write sensor location with error: \(error.localizedDescription)")
            }
        }
    }

    func writeCoffee() {
        bluejay.write(to: bodySensorLocation, value: Coffee(coffee: .espresso)) { result in
            if case .success = result { debugPrint("Coffee written.") }
        }
    }

    func listenToHeartRate() {
        let heartRateService = ServiceIdentifier(uuid: "180D")
        let heartRateCharacteristic = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)

        bluejay.listen(to: heartRateCharacteristic, multipleListenOption: .replaceable)
        { [weak self] (result: ReadResult<HeartRateMeasurement>) in
                guard let weakSelf = self else {
                    return
                }

                switch result {
                case .success(let heartRate):
                    weakSelf.heartRate = heartRate
                    debugPrint("heart rate \(heartRate.measurement)")
                case .failure(let error):
                    debugPrint("Failed to listen with error: \(error.localizedDescription)")
                }
        }
    }

    // MARK: Background Task

    func authenticate() {
        let enteredPassword = self.enteredPassword // port: the task runs on another thread; it takes a copy

        bluejay.run(backgroundTask: { (peripheral) -> (Bool, Bool) in
            // port: the results are the task's own variables (the seed's were captured from
            // outside, which a @Sendable closure may not mutate)
            var isUserAuthenticated = false
            var isAdminAuthenticated = false

            // 1. No need to perform any Bluetooth tasks if there's no password to try.
            guard let password = enteredPassword else {
              return (false, false)
            }

            // 2. Flush auth characteristics in case they are still broadcasting unwanted data.
            try peripheral.flushListen(to: userAuth, nonZeroTimeout: .seconds(3), completion: {
                debugPrint("Flushed buffered data on the user auth characteristic.")
            })

            try peripheral.flushListen(to: adminAuth, nonZeroTimeout: .seconds(3), completion: {
                debugPrint("Flushed buffered data on the admin auth characteristic.")
            })

            // 3. Sanity checks, making sure the characteristics are not broadcasting anymore.
            try peripheral.endListen(to: userAuth)
            try peripheral.endListen(to: adminAuth)

            // 4. Attempt authentication.
            if let passwordData = password.data(using: .utf8) {
                debugPrint("Begin authentication...")

                try peripheral.writeAndListen(
                    writeTo: userAuth,
                    value: passwordData,
                    listenTo: userAuth,
                    timeoutInSeconds: .seconds(15),
                    completion: { (response: UInt8) -> ListenAction in
                        if let responseCode = AuthResponse(rawValue: response) {
                            isUserAuthenticated = responseCode == .success
                        }

                        return .done
                })

                try peripheral.writeAndListen(
                    writeTo: adminAuth,
                    value: passwordData,
                    listenTo: adminAuth,
                    timeoutInSeconds: .seconds(15),
                    completion: { (response: UInt8) -> ListenAction in
                        if let responseCode = AuthResponse(rawValue: response) {
                            isAdminAuthenticated = responseCode == .success
                        }

                        return .done
                })
            }

            // 5. Return results of authentication.
            return (isUserAuthenticated, isAdminAuthenticated)
        }, completionOnMainThread: { (result) in
            switch result {
            case .success(let authResults):
                debugPrint("Is user authenticated: \(authResults.0)")
                debugPrint("Is admin authenticated: \(authResults.1)")
            case .failure(let error):
                debugPrint("Background task failed with error: \(error.localizedDescription)")
            }
        })
    }

    func readFirmware() {
        bluejay.run(backgroundTask: { [weak self] (peripheral) -> Void in
            try peripheral.writeAndAssemble(
                writeTo: Characteristics.rigadoTX,
                value: ReadRequest(handle: Registers.system.firmwareVersion),
                listenTo: Characteristics.rigadoRX,
                expectedLength: FirmwareVersion.length,
                completion: { (firmwareVersion: FirmwareVersion) -> ListenAction in
                    self?.firmware = firmwareVersion.string // port: settings.firmware
                    return .done
            })
        }, completionOnMainThread: { (result: RunResult<Void>) in
            debugPrint("firmware read: \(result)")
        })
    }
}
