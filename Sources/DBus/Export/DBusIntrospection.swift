/// Introspection XML (D-Bus Specification, "Introspection Data Format") for a node of the
/// exported tree: its interfaces, the standard ones the connection answers, and its children.
enum DBusIntrospection {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    /// `interfaces` is `nil` for a node that only leads to objects below it.
    static func xml(interfaces: [DBusInterface]?, isManager: Bool, children: [String]) -> String {
        var lines = [doctype, "<node>"]
        lines += standard(introspectable)
        lines += standard(peer)
        if interfaces != nil { lines += standard(properties) }
        if isManager { lines += standard(objectManager) }
        for interface in interfaces ?? [] {
            lines.append("  <interface name=\"\(escape(interface.name))\">")
            for method in interface.methods {
                lines.append("    <method name=\"\(escape(method.name))\">")
                lines += method.inputs.map { argument($0, direction: "in") }
                lines += method.outputs.map { argument($0, direction: "out") }
                lines.append("    </method>")
            }
            for signal in interface.signals {
                lines.append("    <signal name=\"\(escape(signal.name))\">")
                lines += signal.arguments.map { argument($0, direction: nil) }
                lines.append("    </signal>")
            }
            for property in interface.properties {
                lines.append("    <property name=\"\(escape(property.name))\" type=\"\(escape(property.type.description))\" access=\"\(property.access)\"/>")
            }
            lines.append("  </interface>")
        }
        for child in children { lines.append("  <node name=\"\(escape(child))\"/>") }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func argument(_ argument: DBusArgument, direction: String?) -> String {
        var text = "      <arg"
        if let name = argument.name { text += " name=\"\(escape(name))\"" }
        text += " type=\"\(escape(argument.type.description))\""
        if let direction { text += " direction=\"\(direction)\"" }
        return text + "/>"
    }

    private static func standard(_ text: String) -> [String] {
        text.split(separator: "\n").map { "  " + $0 }
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    private static let introspectable = """
        <interface name="org.freedesktop.DBus.Introspectable">
          <method name="Introspect">
            <arg name="xml_data" type="s" direction="out"/>
          </method>
        </interface>
        """

    private static let peer = """
        <interface name="org.freedesktop.DBus.Peer">
          <method name="Ping"/>
          <method name="GetMachineId">
            <arg name="machine_uuid" type="s" direction="out"/>
          </method>
        </interface>
        """

    private static let properties = """
        <interface name="org.freedesktop.DBus.Properties">
          <method name="Get">
            <arg name="interface_name" type="s" direction="in"/>
            <arg name="property_name" type="s" direction="in"/>
            <arg name="value" type="v" direction="out"/>
          </method>
          <method name="GetAll">
            <arg name="interface_name" type="s" direction="in"/>
            <arg name="props" type="a{sv}" direction="out"/>
          </method>
          <method name="Set">
            <arg name="interface_name" type="s" direction="in"/>
            <arg name="property_name" type="s" direction="in"/>
            <arg name="value" type="v" direction="in"/>
          </method>
          <signal name="PropertiesChanged">
            <arg name="interface_name" type="s"/>
            <arg name="changed_properties" type="a{sv}"/>
            <arg name="invalidated_properties" type="as"/>
          </signal>
        </interface>
        """

    private static let objectManager = """
        <interface name="org.freedesktop.DBus.ObjectManager">
          <method name="GetManagedObjects">
            <arg name="object_paths_interfaces_and_properties" type="a{oa{sa{sv}}}" direction="out"/>
          </method>
          <signal name="InterfacesAdded">
            <arg name="object_path" type="o"/>
            <arg name="interfaces_and_properties" type="a{sa{sv}}"/>
          </signal>
          <signal name="InterfacesRemoved">
            <arg name="object_path" type="o"/>
            <arg name="interfaces" type="as"/>
          </signal>
        </interface>
        """
}
