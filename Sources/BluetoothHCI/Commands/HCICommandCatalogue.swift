/// Every command type this stack encodes, so the opcode of each can be named in logs and the
/// virtual controller can decode what a host sends.
public enum HCICommandCatalogue {
    public static let all: [any HCICommand.Type] = [
        ResetCommand.self,
        ReadLocalVersionInformationCommand.self,
    ]

    public static let names: [HCIOpcode: String] = Dictionary(
        all.map { ($0.opcode, $0.name) }, uniquingKeysWith: { first, _ in first }
    )
}
