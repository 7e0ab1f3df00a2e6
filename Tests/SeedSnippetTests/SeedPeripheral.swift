import Bluejay
import BluetoothSimulator
import Foundation

/// The identifiers the seeds use.
let heartRateService = ServiceIdentifier(uuid: "180D")
let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
let authServiceUUID: BluetoothUUID = "5EED0000-0000-4000-8000-00000000A000"
let userAuthUUID: BluetoothUUID = "5EED0001-0000-4000-8000-00000000A000"
let adminAuthUUID: BluetoothUUID = "5EED0002-0000-4000-8000-00000000A000"
let rigadoServiceUUID: BluetoothUUID = "5EED0000-0000-4000-8000-00000000B000"
let rigadoTXUUID: BluetoothUUID = "5EED0001-0000-4000-8000-00000000B000"
let rigadoRXUUID: BluetoothUUID = "5EED0002-0000-4000-8000-00000000B000"
let authService = ServiceIdentifier(uuid: authServiceUUID)
let userAuth = CharacteristicIdentifier(uuid: userAuthUUID, service: authService)
let adminAuth = CharacteristicIdentifier(uuid: adminAuthUUID, service: authService)
let rigadoService = ServiceIdentifier(uuid: rigadoServiceUUID)
enum Characteristics {
    static let rigadoTX = CharacteristicIdentifier(uuid: rigadoTXUUID, service: rigadoService)
    static let rigadoRX = CharacteristicIdentifier(uuid: rigadoRXUUID, service: rigadoService)
}

/// The user password the auth characteristics accept; the admin one accepts nothing.
let userPassword = "hunter2"
let firmwareString = "fw-1.2.3"

/// A heart-rate sensor with the seeds' other characteristics: user and admin
/// authentication (a write is answered by a notification on the same characteristic) and a
/// Rigado-style serial port (a register read request is answered in 3-byte notifications).
func seedPeripheral() -> SimulatedPeripheral {
    var declaration = HeartRateSensor.declaration(.init(name: "Seed HRM"))
    let answer: @Sendable (BluetoothUUID, Bool) -> SimulatedWriteHandler = { characteristic, accepts in
        { write in
            let ok = accepts && write.value == Array(userPassword.utf8)
            let response = (ok ? AuthResponse.success : AuthResponse.failure).rawValue
            let central = write.central
            let device = write.device
            Task { try? await device.notify([response], on: characteristic, to: central) }
            return .success
        }
    }
    declaration.services.append(SimulatedService(uuid: authServiceUUID, characteristics: [
        SimulatedCharacteristic(uuid: userAuthUUID, properties: [.write, .notify], onWrite: answer(userAuthUUID, true)),
        SimulatedCharacteristic(uuid: adminAuthUUID, properties: [.write, .notify], onWrite: answer(adminAuthUUID, false)),
    ]))
    declaration.services.append(SimulatedService(uuid: rigadoServiceUUID, characteristics: [
        SimulatedCharacteristic(uuid: rigadoTXUUID, properties: [.write], onWrite: { write in
            guard write.value == [0x52, Registers.system.firmwareVersion] else { return .error(.outOfRange) }
            let central = write.central
            let device = write.device
            Task {
                var rest = Array(firmwareString.utf8)
                while !rest.isEmpty {
                    try? await device.notify(Array(rest.prefix(3)), on: rigadoRXUUID, to: central)
                    rest.removeFirst(min(3, rest.count))
                }
            }
            return .success
        }),
        SimulatedCharacteristic(uuid: rigadoRXUUID, properties: [.notify]),
    ]))
    return declaration
}
