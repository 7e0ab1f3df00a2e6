import BluetoothCore

/// The Client Characteristic Configuration descriptors (Core 6.0, Vol 3, Part G, 3.3.3.3):
/// each client has its own value of each one, kept with its ``ConnectedClient`` for as long as the
/// connection lasts, and the subscriptions they make. A write needs what a read of the
/// characteristic's value needs (`writeRefusal(_:kind:length:authorizing:_:)`). A bonded
/// client's configurations outlast the connection: they are kept with its bond and restored
/// once its next link is encrypted with the bond's key (GATTServer+BondedClients.swift).
extension GATTServer {
    /// A client's configuration of a characteristic (none for an unknown client).
    func clientConfiguration(of valueHandle: UInt16, _ context: RequestContext) -> ClientCharacteristicConfiguration {
        client(id: context.clientID, connectionHandle: context.connectionHandle)?.configurations[valueHandle] ?? []
    }

    /// A client writes its Client Characteristic Configuration (Core 6.0, Vol 3, Part G,
    /// 3.3.3.3): two octets; a bit the characteristic's properties do not allow is refused
    /// with CCCD Improperly Configured (Core Specification Supplement, Part B, 1.2).
    func configure(valueHandle: UInt16, properties: CharacteristicProperties, value: [UInt8], _ context: RequestContext) -> ATTErrorCode? {
        guard value.count == 2, let rawValue = ByteReader.uint16(in: value[...], at: 0) else { return .invalidAttributeValueLength }
        let requested = ClientCharacteristicConfiguration(rawValue: rawValue)
        // Bits other than notification and indication are reserved for future use: ignored.
        let configuration = requested.intersection([.notification, .indication])
        if configuration.contains(.notification) && !properties.contains(.notify)
            || configuration.contains(.indication) && !properties.contains(.indicate) {
            return .cccdImproperlyConfigured
        }
        guard var client = client(id: context.clientID, connectionHandle: context.connectionHandle) else { return nil }
        let previous = client.configurations[valueHandle] ?? []
        client.configurations[valueHandle] = configuration.isEmpty ? nil : configuration
        client.configuredOnLink.insert(valueHandle)
        clients[context.connectionHandle] = client
        if previous != configuration {
            let subscription = subscription(client, valueHandle: valueHandle, configuration: configuration)
            logger.debug("\(subscription)")
            broadcast(.subscriptionChanged(subscription))
            keepBondedClientState(of: client)
        }
        return nil
    }

    /// The clients subscribed to a characteristic, with what each asked for.
    public func subscriptions(forHandle valueHandle: UInt16) -> [GATTSubscription] {
        clients.values.sorted { $0.connectionHandle < $1.connectionHandle }.compactMap { client in
            guard let configuration = client.configurations[valueHandle], !configuration.isEmpty else { return nil }
            return subscription(client, valueHandle: valueHandle, configuration: configuration)
        }
    }

    func subscription(_ client: ConnectedClient, valueHandle: UInt16, configuration: ClientCharacteristicConfiguration,
                      isRestored: Bool = false) -> GATTSubscription {
        let uuid = database.attribute(at: valueHandle)?.type ?? BluetoothUUID(UInt16(0))
        return GATTSubscription(connectionHandle: client.connectionHandle, peer: client.link.peer, valueHandle: valueHandle,
                                characteristicUUID: uuid, configuration: configuration, isRestored: isRestored,
                                bondIdentity: client.cachingIdentity)
    }
}
