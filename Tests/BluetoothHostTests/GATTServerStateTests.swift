import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("GATT server state machines: database, prepare queue, indication queue", .timeLimit(.minutes(1)))
struct GATTServerStateTests {
    @Test("The database lays out declarations, values and descriptors as Core 6.0, Vol 3, Part G, 3 says")
    func databaseLayout() throws {
        var database = AttributeDatabase(deviceName: "Bluejay", appearance: 0x0341)
        let published = try database.add(TestDatabase.batteryDefinition)
        let attributes = database.attributes(in: published.handleRange)
        // After the GATT service, which ends with Database Hash at 0x000D.
        #expect(attributes.map(\.handle) == [0x000E, 0x000F, 0x0010, 0x0011])
        #expect(attributes.map(\.type) == [GATTAttributeType.primaryService, GATTAttributeType.characteristic,
                                           TestDatabase.batteryLevel, GATTAttributeType.clientCharacteristicConfiguration])
        // Service declaration: the UUID; characteristic declaration: properties, value handle, UUID.
        #expect(attributes.map(\.value) == [[0x0F, 0x18], [0x12, 0x10, 0x00, 0x19, 0x2A], [100], [0, 0]])
        #expect(database.attribute(at: AttributeDatabase.deviceNameHandle)?.value == Array("Bluejay".utf8))
        #expect(database.attribute(at: AttributeDatabase.appearanceHandle)?.value == [0x41, 0x03])
        #expect(database.attribute(at: 0x0007)?.value == [0x20, 0x08, 0x00, 0x05, 0x2A])
        #expect(database.attribute(at: 0x0001)?.groupEndHandle == 0x0005)
        #expect(database.characteristic(valueHandle: 0x0010)?.uuid == TestDatabase.batteryLevel)
        #expect(database.attributes(in: 0x0012...0xFFFF).isEmpty)
        #expect(database.attribute(at: 0x0012) == nil)
    }

    @Test("A 128-bit characteristic declaration carries the full UUID; an include carries a 16-bit UUID only")
    func declarationValues() throws {
        var database = AttributeDatabase()
        _ = try database.add(TestDatabase.batteryDefinition)
        let published = try database.add(GATTServiceDefinition(uuid: TestDatabase.service, includedServices: [TestDatabase.battery],
                                                               characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.service, properties: [.read, .writeWithoutResponse]),
        ]))
        let attributes = Array(database.attributes(in: published.handleRange))
        #expect(attributes[0].value == TestDatabase.service.littleEndianBytes128)
        #expect(attributes[1].value == [0x0E, 0x00, 0x11, 0x00, 0x0F, 0x18])
        #expect(attributes[2].value == [0x06, UInt8(attributes[3].handle), 0x00] + TestDatabase.service.littleEndianBytes128)
        #expect(attributes[3].permissions == .readWrite)
    }

    @Test("Prepared parts assemble in order, each offset into the value so far")
    func assemble() {
        var queue = PreparedWriteQueue(capacity: 4)
        let accepted = [
            queue.prepare(.init(handle: 1, offset: 0, value: [1, 2, 3])),
            queue.prepare(.init(handle: 2, offset: 1, value: [9])),
            queue.prepare(.init(handle: 1, offset: 3, value: [4])),
            queue.prepare(.init(handle: 1, offset: 1, value: [7])),
            queue.prepare(.init(handle: 1, offset: 0, value: [0])),
        ]
        #expect(accepted == [true, true, true, true, false])
        let result = queue.assemble(currentValue: { $0 == 2 ? [5, 5, 5] : [] }, maximumLength: { _ in 10 })
        guard case let .success(values) = result else {
            Issue.record("assembly failed: \(result)")
            return
        }
        #expect(values.map(\.handle) == [1, 2])
        #expect(values.map(\.value) == [[1, 7], [5, 9]])
    }

    @Test("Assembly fails on an offset past the value so far, or a value longer than allowed")
    func assembleFailures() {
        var queue = PreparedWriteQueue(capacity: 4)
        _ = queue.prepare(.init(handle: 3, offset: 2, value: [1]))
        #expect(queue.assemble(currentValue: { _ in [0] }, maximumLength: { _ in 10 })
            .failureValue == PreparedWriteQueue.Failure(handle: 3, code: .invalidOffset))
        queue.clear()
        _ = queue.prepare(.init(handle: 4, offset: 0, value: [1, 2, 3]))
        #expect(queue.assemble(currentValue: { _ in [] }, maximumLength: { _ in 2 })
            .failureValue == PreparedWriteQueue.Failure(handle: 4, code: .invalidAttributeValueLength))
    }

    @Test("Indications go out one at a time, in order, and a stray confirmation does nothing")
    func indicationQueue() {
        var queue = IndicationQueue<Int>(capacity: 2)
        let stray = queue.confirm().confirmed
        #expect(stray == nil)
        let sent = [1, 2, 3].map { queue.enqueue(.init(id: UInt64($0), handle: 8, value: [UInt8($0)], ticket: $0))?.id }
        #expect(sent == [1, nil, nil])
        #expect(queue.isFull)
        let (confirmed, next) = queue.confirm()
        #expect(confirmed?.id == 1)
        #expect(next?.id == 2)
        #expect(!queue.isFull)
        let removed = queue.removeAll().map(\.id)
        #expect(removed == [2, 3])
        #expect(queue.count == 0)
    }
}

extension Result {
    var failureValue: Failure? {
        if case let .failure(failure) = self { return failure }
        return nil
    }
}
