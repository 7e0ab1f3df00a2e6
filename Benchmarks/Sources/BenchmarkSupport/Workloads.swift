import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport

/// The synchronous workloads (decoding and encoding), each over the whole corpus, with the
/// check string that `bench-compare.sh` compares with the Bumble side's: both stacks must
/// have decoded (or encoded) the same things.
public struct Workloads: Sendable {
    public let corpus: Corpus
    /// ``Corpus/h4Stream`` cut into the transport reads of ``Corpus/h4ChunkSizes``.
    public let h4Chunks: [[UInt8]]
    /// LE Create Connection fields as Bluejay's types, converted before any timing.
    public let createConnections: [CreateConnectionInput]

    public struct CreateConnectionInput: Sendable {
        var fields: Corpus.CreateConnectionFields
        var peerAddressType: AddressType
        var peerAddress: BluetoothAddress
        var ownAddressType: OwnAddressType
        var initiatorFilterPolicy: InitiatorFilterPolicy
    }

    public init(corpus: Corpus) {
        self.corpus = corpus
        var chunks: [[UInt8]] = []
        var offset = 0
        for size in corpus.h4ChunkSizes {
            chunks.append(Array(corpus.h4Stream[offset..<(offset + size)]))
            offset += size
        }
        h4Chunks = chunks
        createConnections = corpus.createConnections.map { fields in
            CreateConnectionInput(
                fields: fields, peerAddressType: AddressType(rawValue: fields.peerAddressType) ?? .public,
                peerAddress: BluetoothAddress(bytes: fields.peerAddress) ?? .zero,
                ownAddressType: OwnAddressType(rawValue: fields.ownAddressType) ?? .public,
                initiatorFilterPolicy: InitiatorFilterPolicy(rawValue: fields.initiatorFilterPolicy) ?? .usePeerAddress)
        }
    }

    // MARK: Single items (for the ordo benchmarks, which count items)

    @inline(never)
    public static func decodeAdvertisingReport(_ bytes: [UInt8]) -> Int {
        guard case let .le(.advertisingReport(event))? = try? HCIEvent.decode(bytes) else { return -1 }
        return event.reports.count
    }

    @inline(never)
    public static func decodeATT(_ bytes: [UInt8]) -> Int {
        guard let pdu = try? ATTPDU.decode(bytes) else { return -1 }
        switch pdu {
        case let .handleValueNotification(notification): return notification.value.count
        case let .readByTypeResponse(response): return response.entries.count
        default: return 0
        }
    }

    @inline(never)
    public static func decodeAdvertisingData(_ bytes: [UInt8]) -> Int {
        (try? AdvertisingData.decode(bytes))?.structures.count ?? -1
    }

    @inline(never)
    public static func decodeAdvertisingDataTyped(_ bytes: [UInt8]) -> Int {
        guard let data = try? AdvertisingData.decode(bytes) else { return -1 }
        return data.fields.count
    }

    @inline(never)
    public static func encodeCreateConnection(_ input: CreateConnectionInput) -> [UInt8] {
        let fields = input.fields
        return LECreateConnectionCommand(
            scanInterval: fields.scanInterval, scanWindow: fields.scanWindow, initiatorFilterPolicy: input.initiatorFilterPolicy,
            peerAddressType: input.peerAddressType, peerAddress: input.peerAddress, ownAddressType: input.ownAddressType,
            connectionIntervalMin: fields.connectionIntervalMin, connectionIntervalMax: fields.connectionIntervalMax,
            maxLatency: fields.maxLatency, supervisionTimeout: fields.supervisionTimeout,
            minCELength: fields.minCELength, maxCELength: fields.maxCELength
        ).encode()
    }

    /// Fragments a PDU and encodes each ACL data packet, as the host does before writing them.
    @inline(never)
    public static func fragment(_ pdu: [UInt8], size: Int) -> [[UInt8]] {
        ACLFragmenter.fragments(of: pdu, connectionHandle: Corpus.connectionHandle, maximumDataLength: size).map { $0.encode() }
    }

    // MARK: Batches (one pass over the corpus; the count of items is what is reported)

    public func advertisingReportBatch() -> Int {
        var sink = 0
        for event in corpus.advertisingReportEvents { sink &+= Self.decodeAdvertisingReport(event) }
        return sink
    }

    /// Packets cut from the stream.
    public func h4Batch() -> Int {
        var deframer = H4Deframer()
        var packets = 0
        for chunk in h4Chunks {
            packets += (try? deframer.append(chunk).count) ?? 0
        }
        return packets
    }

    public func notificationBatch() -> Int {
        var sink = 0
        for pdu in corpus.attNotifications { sink &+= Self.decodeATT(pdu) }
        return sink
    }

    public func readByTypeBatch() -> Int {
        var sink = 0
        for pdu in corpus.attReadByTypeResponses { sink &+= Self.decodeATT(pdu) }
        return sink
    }

    public func advertisingDataBatch() -> Int {
        var sink = 0
        for data in corpus.advertisingData { sink &+= Self.decodeAdvertisingData(data) }
        return sink
    }

    public func advertisingDataTypedBatch() -> Int {
        var sink = 0
        for data in corpus.advertisingData { sink &+= Self.decodeAdvertisingDataTyped(data) }
        return sink
    }

    public func createConnectionBatch() -> Int {
        var sink = 0
        for input in createConnections { sink &+= Self.encodeCreateConnection(input).count }
        return sink
    }

    public func fragmentBatch(size: Int) -> Int {
        var sink = 0
        for pdu in corpus.l2capPDUs { sink &+= Self.fragment(pdu, size: size).count }
        return sink
    }

    /// Decodes the 27-octet fragments and reassembles them; returns the PDUs completed.
    public func reassemblyBatch() -> Int {
        var reassembler = ACLReassembler()
        var pdus = 0
        for bytes in corpus.aclFragments27 {
            guard let packet = try? ACLDataPacket.decode(bytes) else { continue }
            if (try? reassembler.append(packet)) != nil { pdus += 1 }
        }
        return pdus
    }

    // MARK: Checks (outside any timing)

    public func advertisingReportCheck() -> String {
        var reports = 0, dataBytes = 0, rssi = 0, addressSum = 0
        for bytes in corpus.advertisingReportEvents {
            guard case let .le(.advertisingReport(event))? = try? HCIEvent.decode(bytes) else { return "decode failed" }
            for report in event.reports {
                reports += 1
                dataBytes += report.data.count
                rssi += Int(report.rssi ?? 127)
                addressSum += report.address.bytes.reduce(0) { $0 + Int($1) } + Int(report.addressType.rawValue) + Int(report.eventType.rawValue)
            }
        }
        return "events=\(corpus.advertisingReportEvents.count) reports=\(reports) data=\(dataBytes) rssi=\(rssi) fields=\(addressSum)"
    }

    public func h4Check() -> String {
        var deframer = H4Deframer()
        var packets = 0, bytes = 0, acl = 0
        for chunk in h4Chunks {
            guard let cut = try? deframer.append(chunk) else { return "deframe failed" }
            for packet in cut {
                packets += 1
                bytes += packet.bytes.count
                if packet.indicator == .acl { acl += 1 }
            }
        }
        return "packets=\(packets) bytes=\(bytes) acl=\(acl)"
    }

    public func notificationCheck() -> String {
        var handles = 0, values = 0
        for bytes in corpus.attNotifications {
            guard case let .handleValueNotification(pdu)? = try? ATTPDU.decode(bytes) else { return "decode failed" }
            handles += Int(pdu.handle)
            values += pdu.value.count
        }
        return "pdus=\(corpus.attNotifications.count) handles=\(handles) values=\(values)"
    }

    public func readByTypeCheck() -> String {
        var entries = 0, handles = 0, values = 0
        for bytes in corpus.attReadByTypeResponses {
            guard case let .readByTypeResponse(pdu)? = try? ATTPDU.decode(bytes) else { return "decode failed" }
            for entry in pdu.entries {
                entries += 1
                handles += Int(entry.handle)
                values += entry.value.count
            }
        }
        return "pdus=\(corpus.attReadByTypeResponses.count) entries=\(entries) handles=\(handles) values=\(values)"
    }

    public func advertisingDataCheck() -> String {
        var structures = 0, types = 0, dataBytes = 0
        for bytes in corpus.advertisingData {
            guard let data = try? AdvertisingData.decode(bytes) else { return "decode failed" }
            for structure in data.structures {
                structures += 1
                types += Int(structure.type.rawValue)
                dataBytes += structure.data.count
            }
        }
        return "payloads=\(corpus.advertisingData.count) structures=\(structures) types=\(types) data=\(dataBytes)"
    }

    public func advertisingDataTypedCheck() -> String {
        var flags = 0, uuids = 0, uuidSum = 0, nameCharacters = 0, companies = 0, manufacturerBytes = 0
        for bytes in corpus.advertisingData {
            guard let data = try? AdvertisingData.decode(bytes) else { return "decode failed" }
            for field in data.fields {
                switch field {
                case let .flags(value): flags += Int(value.rawValue)
                case let .serviceUUIDs16(list, _): uuids += list.count; uuidSum += list.reduce(0) { $0 + Int($1) }
                case let .completeLocalName(name): nameCharacters += name.count
                case let .manufacturerSpecificData(company, data): companies += Int(company); manufacturerBytes += data.count
                default: return "unexpected field \(field)"
                }
            }
        }
        return "flags=\(flags) uuids=\(uuids) uuid_sum=\(uuidSum) name_chars=\(nameCharacters) companies=\(companies) mfr_bytes=\(manufacturerBytes)"
    }

    public func createConnectionCheck() -> String {
        var crc = CRC32()
        var bytes = 0
        for input in createConnections {
            let packet = Self.encodeCreateConnection(input)
            crc.update(packet)
            bytes += packet.count
        }
        return "commands=\(createConnections.count) bytes=\(bytes) crc=\(crc.hex)"
    }

    public func fragmentCheck(size: Int) -> String {
        var crc = CRC32()
        var fragments = 0
        for pdu in corpus.l2capPDUs {
            for packet in Self.fragment(pdu, size: size) {
                crc.update(packet)
                fragments += 1
            }
        }
        return "pdus=\(corpus.l2capPDUs.count) fragments=\(fragments) crc=\(crc.hex)"
    }

    public func reassemblyCheck() -> String {
        var reassembler = ACLReassembler()
        var crc = CRC32()
        var pdus = 0
        for bytes in corpus.aclFragments27 {
            guard let packet = try? ACLDataPacket.decode(bytes) else { return "decode failed" }
            do {
                if let pdu = try reassembler.append(packet) {
                    pdus += 1
                    crc.update(pdu)
                }
            } catch {
                return "reassembly failed: \(error)"
            }
        }
        return "pdus=\(pdus) crc=\(crc.hex)"
    }
}
