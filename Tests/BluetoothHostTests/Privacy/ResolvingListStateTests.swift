import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Testing

/// The host's model of the controller's resolving list: what it sends to bring the controller
/// in step with the bonds, in which order, and what it leaves to the host.
@Suite("Resolving list bookkeeping", .timeLimit(.minutes(1)))
struct ResolvingListStateTests {
    static func identity(_ index: UInt64) -> DeviceAddress {
        DeviceAddress(BluetoothAddress(rawValue: 0xC0DE_0000_0000 | index), type: index % 2 == 0 ? .public : .random)
    }

    /// Applies every change the state asks for, as a controller that accepts them all would.
    static func settle(_ list: inout ResolvingListState) -> [ResolvingListState.Change] {
        var sent: [ResolvingListState.Change] = []
        while let change = list.nextChange() {
            sent.append(change)
            list.didApply(change)
            if sent.count > 100 { break }
        }
        return sent
    }

    @Test func atPowerOnTheListIsClearedFilledInBondOrderAndResolutionTurnedOn() {
        var list = ResolvingListState(capacity: 8)
        list.setWanted([(Self.identity(2), 0x22), (Self.identity(1), 0x11)])
        #expect(list.controllerResolved.isEmpty, "nothing resolved before the controller has it")
        let sent = Self.settle(&list)
        #expect(sent == [.clear, .add(identity: Self.identity(2), irk: 0x22), .add(identity: Self.identity(1), irk: 0x11), .enableResolution])
        #expect(list.controllerResolved == [Self.identity(1), Self.identity(2)])
        #expect(list.isInStep)
        #expect(list.resolves(DeviceAddress(Self.identity(1).address, type: .randomIdentity)), "by base type")
    }

    @Test func aFullListKeepsItsEntriesAndTheRestOverflowsToTheHost() {
        var list = ResolvingListState(capacity: 2)
        list.setWanted((1...4).map { (Self.identity($0), UInt128($0)) })
        _ = Self.settle(&list)
        #expect(list.controllerResolved == [Self.identity(1), Self.identity(2)])
        #expect(list.overflow == [Self.identity(3), Self.identity(4)])
        // A later bond waits too; the first removal frees a slot for the oldest waiting one.
        list.add(identity: Self.identity(5), irk: 5)
        #expect(list.isInStep, "no room: nothing to send")
        list.remove(identity: Self.identity(1))
        #expect(Self.settle(&list) == [.remove(Self.identity(1)), .add(identity: Self.identity(3), irk: 3)])
        #expect(list.controllerResolved == [Self.identity(2), Self.identity(3)])
        #expect(list.overflow == [Self.identity(4), Self.identity(5)])
    }

    @Test func aControllerThatRefusesForWantOfRoomHoldsNoMore() {
        var list = ResolvingListState(capacity: 8)
        list.setWanted((1...3).map { (Self.identity($0), UInt128($0)) })
        list.didApply(.clear)
        list.didApply(.add(identity: Self.identity(1), irk: 1))
        #expect(list.nextChange() == .add(identity: Self.identity(2), irk: 2))
        // Memory Capacity Exceeded: what it holds is all it holds.
        list.controllerIsFull()
        #expect(list.capacity == 1)
        #expect(list.nextChange() == .enableResolution)
        list.didApply(.enableResolution)
        #expect(list.isInStep)
        #expect(list.overflow == [Self.identity(2), Self.identity(3)])
    }

    @Test func aReplacedIRKIsRemovedThenAddedAgain() {
        var list = ResolvingListState(capacity: 8)
        list.setWanted([(Self.identity(1), 0x11)])
        _ = Self.settle(&list)
        list.add(identity: Self.identity(1), irk: 0x99)
        #expect(Self.settle(&list) == [.remove(Self.identity(1)), .add(identity: Self.identity(1), irk: 0x99)])
    }

    @Test func reloadedBondsKeepTheirPlaces() {
        var list = ResolvingListState(capacity: 2)
        list.setWanted([(Self.identity(1), 1), (Self.identity(2), 2)])
        _ = Self.settle(&list)
        // Another process bonded a third peer; the store lists the bonds in another order.
        list.setWanted([(Self.identity(3), 3), (Self.identity(2), 2), (Self.identity(1), 1)])
        #expect(list.isInStep, "the two in the list stay; the new one waits")
        #expect(list.overflow == [Self.identity(3)])
    }

    @Test func afterAResetTheListIsFilledAgain() {
        var list = ResolvingListState(capacity: 8)
        list.setWanted([(Self.identity(1), 1)])
        _ = Self.settle(&list)
        list.controllerWasReset()
        #expect(list.controllerResolved.isEmpty)
        #expect(Self.settle(&list) == [.add(identity: Self.identity(1), irk: 1), .enableResolution], "no clear needed after a reset")
    }
}
