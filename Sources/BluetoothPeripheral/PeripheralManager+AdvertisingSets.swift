import BluetoothCore
import BluetoothHost

extension PeripheralManager {
    /// Starts an extended advertising set (see `LEHost/startAdvertisingSet(_:scanResponse:parameters:)`):
    /// data and scan response up to the controller's maximum (``maximumAdvertisingDataLength``),
    /// several sets at once, PHYs, a duration or an event limit. Without extended advertising
    /// in the controller a set that fits in 31 octets runs on legacy advertising.
    public func startAdvertisingSet(_ data: AdvertisingData, scanResponse: AdvertisingData? = nil,
                                    parameters: ExtendedAdvertisingParameters = ExtendedAdvertisingParameters()) async throws(PeripheralError) -> AdvertisingSet {
        do {
            return try await requireHost("advertising sets").startAdvertisingSet(data, scanResponse: scanResponse, parameters: parameters)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// Stops an advertising set and removes it from the controller.
    public func stopAdvertisingSet(_ set: AdvertisingSet) async throws(PeripheralError) {
        do {
            try await requireHost("advertising sets").stopAdvertisingSet(set)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// Stops every advertising set (legacy advertising is left as it is).
    public func stopAllAdvertisingSets() async throws(PeripheralError) {
        do {
            try await requireHost("advertising sets").stopAllAdvertisingSets()
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// The sets advertising now.
    public var activeAdvertisingSets: [AdvertisingSet] {
        get async { await host?.activeAdvertisingSets ?? [] }
    }

    /// The most advertising data one set carries: the controller's maximum with extended
    /// advertising, 31 octets without.
    public var maximumAdvertisingDataLength: Int {
        get async throws(PeripheralError) {
            do {
                return try await requireHost("the controller's advertising data length").maximumAdvertisingDataLength()
            } catch {
                throw PeripheralError.wrap(error)
            }
        }
    }

    /// The advertising sets that ended on their own: a central connected (with the
    /// connection), the duration ran out, or the event limit was reached.
    public func advertisingSetTerminations() async -> AsyncStream<AdvertisingSetTermination> {
        guard let host else { return AsyncStream { $0.finish() } }
        return await host.advertisingSetTerminations()
    }
}
