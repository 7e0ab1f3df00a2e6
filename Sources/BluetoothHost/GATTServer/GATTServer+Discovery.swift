import BluetoothCore

/// The requests GATT discovery uses (Core 6.0, Vol 3, Part F, 3.4.3 and 3.4.4.1, 3.4.4.9).
extension GATTServer {
    /// Find Information (Vol 3, Part F, 3.4.3.1): handle and type of each attribute in the
    /// range, as many as fit in ATT_MTU − 2 octets, all of one UUID width (the first one's).
    func findInformation(_ request: ATTFindInformationRequest, _ context: RequestContext) -> ATTPDU {
        let opcode = ATTOpcode.findInformationRequest
        if let invalid = Self.checkRange(request.startingHandle, request.endingHandle, opcode: opcode) { return invalid }
        let found = database.attributes(in: request.startingHandle...request.endingHandle)
        guard let first = found.first else { return Self.error(opcode, request.startingHandle, .attributeNotFound) }
        let isShort = first.type.uint16 != nil
        let room = (context.mtu - 2) / (2 + (isShort ? 2 : 16))
        let entries = found.prefix { ($0.type.uint16 != nil) == isShort }.prefix(room)
            .map { ATTFindInformationResponse.Entry(handle: $0.handle, type: $0.type) }
        let format: ATTFindInformationResponse.Format = isShort ? .uuid16 : .uuid128
        return .findInformationResponse(ATTFindInformationResponse(format: format, entries: entries)
            ?? ATTFindInformationResponse(entries: entries))
    }

    /// Find By Type Value (Vol 3, Part F, 3.4.3.3): the attributes of a 16-bit type readable on this link
    /// holding a value, with the end of their group; GATT finds a primary service by UUID
    /// this way. A service UUID matches in either width.
    func findByTypeValue(_ request: ATTFindByTypeValueRequest, _ context: RequestContext) -> ATTPDU {
        let opcode = ATTOpcode.findByTypeValueRequest
        if let invalid = Self.checkRange(request.startingHandle, request.endingHandle, opcode: opcode) { return invalid }
        let type = BluetoothUUID(request.attributeType)
        let matches = database.attributes(in: request.startingHandle...request.endingHandle).filter { attribute in
            // Only values this client may read now; none that needs the application's
            // authorization (this request asks no handler).
            guard attribute.type == type, readSecurityRefusal(attribute, context) == nil, !attribute.readRequirement.authorization,
                  attribute.onRead == nil else { return false }
            if case .clientConfiguration = attribute.kind { return false }
            if attribute.value == request.attributeValue { return true }
            guard attribute.isServiceDeclaration, let stored = BluetoothUUID(littleEndianBytes: attribute.value),
                  let wanted = BluetoothUUID(littleEndianBytes: request.attributeValue) else { return false }
            return stored == wanted
        }
        guard !matches.isEmpty else { return Self.error(opcode, request.startingHandle, .attributeNotFound) }
        let information = matches.prefix((context.mtu - 1) / 4).map {
            ATTFindByTypeValueResponse.HandlesInformation(foundAttributeHandle: $0.handle, groupEndHandle: $0.groupEndHandle)
        }
        return .findByTypeValueResponse(ATTFindByTypeValueResponse(handlesInformation: information))
    }

    /// Read By Type (Vol 3, Part F, 3.4.4.1): handle-value pairs of the attributes of a type,
    /// all as long as the first, each cut to min(ATT_MTU − 4, 253) octets, as many as fit.
    /// If the first one cannot be read, its error is the answer; a later one ends the list.
    func readByType(_ request: ATTReadByTypeRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.readByTypeRequest
        if let invalid = Self.checkRange(request.startingHandle, request.endingHandle, opcode: opcode) { return invalid }
        let matches = database.attributes(in: request.startingHandle...request.endingHandle).filter { $0.type == request.attributeType }
        guard !matches.isEmpty else { return Self.error(opcode, request.startingHandle, .attributeNotFound) }
        let longest = min(context.mtu - 4, ATTReadByTypeResponse.maximumValueLength)
        var entries: [ATTReadByTypeResponse.AttributeData] = []
        for attribute in matches {
            if let length = entries.first?.value.count, 2 + (entries.count + 1) * (2 + length) > context.mtu { break }
            let answer = await readValue(of: attribute, context)
            guard case let .value(value) = answer else {
                if entries.isEmpty, case let .error(code) = answer { return Self.error(opcode, attribute.handle, code) }
                break
            }
            let cut = Array(value.prefix(longest))
            if let length = entries.first?.value.count, cut.count != length { break }
            entries.append(.init(handle: attribute.handle, value: cut))
        }
        guard let response = ATTReadByTypeResponse(entries: entries) else {
            return Self.error(opcode, request.startingHandle, .unlikelyError)
        }
        return .readByTypeResponse(response)
    }

    /// Read By Group Type (Vol 3, Part F, 3.4.4.9): the service declarations in the range,
    /// with the ends of their groups. Only services group attributes in GATT, so any other
    /// type is Unsupported Group Type (Vol 3, Part G, 2.5.3).
    func readByGroupType(_ request: ATTReadByGroupTypeRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.readByGroupTypeRequest
        if let invalid = Self.checkRange(request.startingHandle, request.endingHandle, opcode: opcode) { return invalid }
        let type = request.attributeGroupType
        guard type == GATTAttributeType.primaryService || type == GATTAttributeType.secondaryService else {
            return Self.error(opcode, request.startingHandle, .unsupportedGroupType)
        }
        let matches = database.attributes(in: request.startingHandle...request.endingHandle).filter { $0.type == type }
        guard !matches.isEmpty else { return Self.error(opcode, request.startingHandle, .attributeNotFound) }
        let longest = min(context.mtu - 6, ATTReadByGroupTypeResponse.maximumValueLength)
        var entries: [ATTReadByGroupTypeResponse.GroupData] = []
        for attribute in matches {
            if let length = entries.first?.value.count, 2 + (entries.count + 1) * (4 + length) > context.mtu { break }
            guard case let .value(value) = await readValue(of: attribute, context) else { break }
            let cut = Array(value.prefix(longest))
            if let length = entries.first?.value.count, cut.count != length { break }
            entries.append(.init(handle: attribute.handle, endGroupHandle: attribute.groupEndHandle, value: cut))
        }
        guard let response = ATTReadByGroupTypeResponse(entries: entries) else {
            return Self.error(opcode, request.startingHandle, .unlikelyError)
        }
        return .readByGroupTypeResponse(response)
    }
}
