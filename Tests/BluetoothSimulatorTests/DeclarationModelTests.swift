import BluetoothHost
@testable import BluetoothSimulator
import Testing

/// Simulated services and characteristics as builders over the GATT server's definitions.
@Suite("Simulator declaration model", .timeLimit(.minutes(1)))
struct DeclarationModelTests {
    @Test("Permissions left nil follow the properties; an override stays until cleared")
    func derivedPermissions() {
        var characteristic = SimulatedCharacteristic(uuid: "FFF1", properties: [.read])
        #expect(characteristic.permissions == nil && characteristic.isReadable && !characteristic.isWritable)
        characteristic.properties.insert(.write)
        #expect(characteristic.isWritable && characteristic.definition.permissions == .readWrite)
        characteristic.permissions = .readable
        #expect(!characteristic.isWritable && characteristic.resolvedPermissions == .readable)
        characteristic.permissions = nil
        #expect(characteristic.resolvedPermissions == .readWrite)
    }

    @Test("A service keeps each characteristic's delay, handlers and override beside its definition")
    func serviceRoundTrip() {
        var service = SimulatedService(uuid: "FFF0", characteristics: [
            SimulatedCharacteristic(uuid: "FFF1", properties: [.read, .write], permissions: .readable, value: [1],
                                    responseDelay: .milliseconds(5), onRead: { _ in .value([9]) }),
            SimulatedCharacteristic(uuid: "FFF2", properties: [.notify]),
        ])
        service.characteristics[1].value = [2]
        service.includedServices = ["180F"]
        #expect(service.definition.characteristics.map(\.uuid) == ["FFF1", "FFF2"])
        #expect(service.definition.characteristics.map(\.value) == [[1], [2]])
        #expect(service.definition.includedServices == ["180F"])
        let first = service.characteristics[0]
        #expect(first.permissions == .readable && first.responseDelay == .milliseconds(5) && first.onRead != nil)
        #expect(service.characteristics[1].responseDelay == .zero && service.characteristics[1].onRead == nil)
    }
}
