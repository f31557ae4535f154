//! Table tests of the CNI readiness checks: the file the runtime would load, and good and
//! broken configurations of every Windows plugin, each broken one named by file and field.

use super::windows::{check_windows_config, windows_readiness, WindowsPlugin};
use super::{chosen_file, ConfigFile, NOT_READY_REASON};

/// An l2bridge network for win-bridge with HNS v1 policies, as the Kubernetes guides show it.
const WIN_BRIDGE: &str = r#"{
  "cniVersion": "0.2.0",
  "name": "cbr0",
  "plugins": [{
    "type": "win-bridge",
    "capabilities": { "portMappings": true, "dns": true },
    "ipam": { "type": "host-local", "subnet": "10.244.1.0/24" },
    "dns": { "Nameservers": ["10.96.0.10"], "Search": ["svc.cluster.local"] },
    "policies": [
      { "name": "EndpointPolicy", "value": { "Type": "OutBoundNAT", "ExceptionList": ["10.244.0.0/16", "10.96.0.0/12"] } },
      { "name": "EndpointPolicy", "value": { "Type": "ROUTE", "DestinationPrefix": "10.96.0.0/12", "NeedEncap": true } }
    ]
  }]
}"#;

/// The same network with HCN (ApiVersion 2) policies.
const WIN_BRIDGE_V2: &str = r#"{
  "cniVersion": "0.2.0",
  "name": "cbr0",
  "plugins": [{
    "type": "win-bridge",
    "ApiVersion": 2,
    "ipam": { "type": "host-local", "subnet": "10.244.1.0/24" },
    "dns": { "Nameservers": ["10.96.0.10"] },
    "HcnPolicyArgs": [
      { "Type": "OutBoundNAT", "Settings": { "Exceptions": ["10.244.0.0/16"] } },
      { "Type": "SDNRoute", "Settings": { "DestinationPrefix": "10.96.0.0/12", "NeedEncap": true } }
    ]
  }]
}"#;

/// A single-network win-overlay file, DNS from the runtime.
const WIN_OVERLAY: &str = r#"{
  "cniVersion": "0.2.0",
  "name": "vxlan0",
  "type": "win-overlay",
  "ipMasq": true,
  "endpointMacPrefix": "0E-2A",
  "capabilities": { "dns": true },
  "ipam": { "type": "host-local", "subnet": "10.244.2.0/24" }
}"#;

/// Microsoft's sdnbridge with dual-stack ranges and AdditionalArgs policies.
const SDNBRIDGE: &str = r#"{
  "cniVersion": "0.2.0",
  "name": "l2bridgenetwork",
  "type": "sdnbridge",
  "master": "Ethernet",
  "capabilities": { "portMappings": true, "dnsCapabilities": true },
  "optionalFlags": { "localRoutedPortMapping": true, "allowAclPortMapping": true },
  "ipam": { "ranges": [[{ "subnet": "10.0.0.0/24", "gateway": "10.0.0.1" }], [{ "subnet": "fd00::/64", "gateway": "fd00::1" }]] },
  "dns": { "Nameservers": ["10.50.50.50"], "Search": ["svc.cluster.local"] },
  "AdditionalArgs": [
    { "Name": "EndpointPolicy", "Value": { "Type": "OutBoundNAT", "Settings": { "Exceptions": ["10.0.0.0/8"] } } },
    { "Name": "EndpointPolicy", "Value": { "Type": "SDNRoute", "Settings": { "DestinationPrefix": "10.50.0.0/16", "NeedEncap": true } } }
  ]
}"#;

/// flannel delegating to sdnoverlay.
const FLANNEL_SDNOVERLAY: &str = r#"{
  "cniVersion": "0.3.0",
  "name": "vxlan0",
  "plugins": [{
    "type": "flannel",
    "capabilities": { "portMappings": true, "dns": true },
    "delegate": {
      "type": "sdnoverlay",
      "ipam": { "subnet": "10.244.3.0/24" },
      "AdditionalArgs": [
        { "Name": "EndpointPolicy", "Value": { "Type": "OutBoundNAT", "Settings": { "Exceptions": ["10.244.0.0/16", "10.96.0.0/12"] } } },
        { "Name": "EndpointPolicy", "Value": { "Type": "ProviderAddress", "Settings": { "ProviderAddress": "192.0.2.10" } } }
      ]
    }
  }]
}"#;

/// Microsoft's nat, addresses from HNS.
const NAT: &str = r#"{
  "cniVersion": "0.2.0",
  "name": "nat",
  "type": "nat",
  "dns": { "Nameservers": ["192.0.2.53"] }
}"#;

#[test]
fn good_configs_of_every_plugin_pass() {
    let table = [
        (WIN_BRIDGE, "cbr0", WindowsPlugin::WinBridge, "l2bridge"),
        (WIN_BRIDGE_V2, "cbr0", WindowsPlugin::WinBridge, "l2bridge"),
        (WIN_OVERLAY, "vxlan0", WindowsPlugin::WinOverlay, "overlay"),
        (
            SDNBRIDGE,
            "l2bridgenetwork",
            WindowsPlugin::SdnBridge,
            "l2bridge",
        ),
        (
            FLANNEL_SDNOVERLAY,
            "vxlan0",
            WindowsPlugin::SdnOverlay,
            "overlay",
        ),
        (NAT, "nat", WindowsPlugin::Nat, "nat"),
    ];
    for (text, name, plugin, mode) in table {
        let network = check_windows_config(ConfigFile {
            name: "10-net.conflist",
            text,
        })
        .unwrap_or_else(|fault| panic!("{name}: {fault}"));
        assert_eq!(network.name, name);
        assert_eq!(network.plugin, plugin);
        assert_eq!(plugin.mode(), mode);
    }
}

/// `base` with the first occurrence of `from` replaced by `to` (which must change it).
fn edit(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "{from:?} not in the base config");
    base.replacen(from, to, 1)
}

#[test]
fn broken_configs_are_named_by_file_and_field() {
    let table: Vec<(&str, String, &str)> = vec![
        ("not JSON", "{ \"name\": ".to_owned(), "10-net.conflist: not JSON: "),
        ("no plugins", edit(WIN_BRIDGE, "\"plugins\": [{", "\"plugins\": [], \"x\": [{"), "10-net.conflist: plugins: is empty"),
        ("no name", edit(WIN_BRIDGE, "\"name\": \"cbr0\",", ""), "10-net.conflist: name: is missing"),
        ("no cniVersion", edit(WIN_BRIDGE, "\"cniVersion\": \"0.2.0\",", ""), "10-net.conflist: cniVersion: is missing"),
        ("linux plugin", edit(WIN_BRIDGE, "win-bridge", "bridge"), "10-net.conflist: plugins[0].type: \"bridge\" is not a Windows network plugin"),
        ("bad subnet", edit(WIN_BRIDGE, "10.244.1.0/24", "10.244.1.0/33"), "10-net.conflist: plugins[0].ipam.subnet: \"10.244.1.0/33\" is not a CIDR block"),
        ("bad ApiVersion", edit(WIN_BRIDGE_V2, "\"ApiVersion\": 2", "\"ApiVersion\": 3"), "10-net.conflist: plugins[0].ApiVersion: must be 1 (HNS) or 2 (HCN), not 3"),
        ("v1 policies under v2", edit(WIN_BRIDGE, "\"type\": \"win-bridge\",", "\"type\": \"win-bridge\", \"ApiVersion\": 2,"), "10-net.conflist: plugins[0].policies: is not read with ApiVersion 2, which reads HcnPolicyArgs"),
        ("v2 policies under v1", edit(WIN_BRIDGE_V2, "\"ApiVersion\": 2,", ""), "10-net.conflist: plugins[0].HcnPolicyArgs: is not read with ApiVersion 1, which reads policies"),
        ("policy without Type", edit(WIN_BRIDGE, "\"Type\": \"OutBoundNAT\", ", ""), "10-net.conflist: plugins[0].policies[0].value.Type: is missing"),
        ("ignored policy name", edit(WIN_BRIDGE, "\"name\": \"EndpointPolicy\"", "\"name\": \"NetworkPolicy\""), "10-net.conflist: plugins[0].policies[0].name: \"NetworkPolicy\" is ignored by win-bridge"),
        ("bad NAT exception", edit(WIN_BRIDGE, "\"10.96.0.0/12\"]", "\"10.96.0.0-12\"]"), "10-net.conflist: plugins[0].policies[0].value.ExceptionList[1]: \"10.96.0.0-12\" is not an IP address"),
        ("ROUTE without prefix", edit(WIN_BRIDGE, "\"DestinationPrefix\": \"10.96.0.0/12\", ", ""), "10-net.conflist: plugins[0].policies[1].value.DestinationPrefix: is missing"),
        ("SDNRoute without Settings", edit(WIN_BRIDGE_V2, ", \"Settings\": { \"DestinationPrefix\": \"10.96.0.0/12\", \"NeedEncap\": true }", ""), "10-net.conflist: plugins[0].HcnPolicyArgs[1].Settings: is missing: SDNRoute needs Settings.DestinationPrefix"),
        ("no DNS anywhere", edit(WIN_BRIDGE_V2, "\"dns\": { \"Nameservers\": [\"10.96.0.10\"] },", ""), "10-net.conflist: plugins[0].dns.Nameservers: is empty and capabilities.dns is not true"),
        ("bad nameserver", edit(WIN_BRIDGE, "\"10.96.0.10\"", "\"kube-dns\""), "10-net.conflist: plugins[0].dns.Nameservers[0]: \"kube-dns\" is not an IP address"),
        ("overlay without ipam", edit(WIN_OVERLAY, "\"ipam\": { \"type\": \"host-local\", \"subnet\": \"10.244.2.0/24\" }", "\"x\": 1"), "10-net.conflist: ipam: is missing: win-overlay needs an IPAM plugin"),
        ("overlay ipam without type", edit(WIN_OVERLAY, "\"type\": \"host-local\", ", ""), "10-net.conflist: ipam.type: is missing"),
        ("overlay on IPv6", edit(WIN_OVERLAY, "10.244.2.0/24", "fd00::/64"), "10-net.conflist: ipam.subnet: win-overlay supports IPv4 only"),
        ("bad MAC prefix", edit(WIN_OVERLAY, "0E-2A", "0E2A"), "10-net.conflist: endpointMacPrefix: \"0E2A\" must be of the form xx-xx"),
        ("sdnbridge without subnet", edit(SDNBRIDGE, "\"ranges\"", "\"rangez\""), "10-net.conflist: ipam.subnet: is missing: sdnbridge takes pod addresses"),
        ("sdnbridge without ipam", edit(NAT, "\"type\": \"nat\"", "\"type\": \"sdnbridge\""), "10-net.conflist: ipam: is missing: sdnbridge takes pod addresses"),
        ("bad range gateway", edit(SDNBRIDGE, "\"gateway\": \"10.0.0.1\"", "\"gateway\": \"10.0.0\""), "10-net.conflist: ipam.ranges[0][0].gateway: \"10.0.0\" is not an IP address"),
        ("AdditionalArgs value not an object", edit(SDNBRIDGE, "\"Value\": { \"Type\": \"OutBoundNAT\", \"Settings\": { \"Exceptions\": [\"10.0.0.0/8\"] } }", "\"Value\": \"OutBoundNAT\""), "10-net.conflist: AdditionalArgs[0].Value: must be an object, not a string"),
        ("flannel without delegate", edit(FLANNEL_SDNOVERLAY, "\"delegate\"", "\"delegat\""), "10-net.conflist: plugins[0].delegate: is missing"),
        ("bad provider address", edit(FLANNEL_SDNOVERLAY, "192.0.2.10", "192.0.2"), "10-net.conflist: plugins[0].delegate.AdditionalArgs[1].Value.Settings.ProviderAddress: \"192.0.2\" is not an IP address"),
        ("flannel delegate without DNS", edit(FLANNEL_SDNOVERLAY, "\"portMappings\": true, \"dns\": true", "\"portMappings\": true"), "10-net.conflist: plugins[0].delegate.dns.Nameservers: is empty"),
        ("wrong field type", edit(WIN_BRIDGE, "\"dns\": true", "\"dns\": \"yes\""), "10-net.conflist: plugins[0].capabilities.dns: must be true or false, not a string"),
    ];
    for (what, text, expected) in table {
        let fault = check_windows_config(ConfigFile {
            name: "10-net.conflist",
            text: &text,
        })
        .expect_err(what);
        assert!(fault.to_string().starts_with(expected), "{what}: {fault}");
    }
}

#[test]
fn the_first_config_file_by_name_is_the_one_loaded() {
    assert_eq!(
        chosen_file(&["README", "20-b.conf", "10-a.conflist", "05-c.json.bak"]),
        Some("10-a.conflist")
    );
    assert_eq!(chosen_file(&["README", "notes.txt"]), None);
}

#[test]
fn readiness_names_the_directory_file_and_field() {
    let dir = r"C:\etc\cni\net.d";
    let ready = windows_readiness(
        dir,
        &[ConfigFile {
            name: "10-l2bridge.conflist",
            text: WIN_BRIDGE,
        }],
    );
    assert!(
        ready.ready && ready.reason.is_empty() && ready.message.is_empty(),
        "{ready:?}"
    );

    let empty = windows_readiness(
        dir,
        &[ConfigFile {
            name: "README.md",
            text: "",
        }],
    );
    assert!(!empty.ready);
    assert_eq!(empty.reason, NOT_READY_REASON);
    assert_eq!(
        empty.message,
        r"cni config uninitialized: no network config (.conf, .conflist, .json) in C:\etc\cni\net.d"
    );

    // The broken file sorts first, so it is the one loaded: not ready, whatever follows it.
    let broken = edit(WIN_BRIDGE, "10.244.1.0/24", "10.244.1.0");
    let files = [
        ConfigFile {
            name: "20-good.conflist",
            text: WIN_BRIDGE,
        },
        ConfigFile {
            name: "10-broken.conflist",
            text: &broken,
        },
    ];
    let not_ready = windows_readiness(dir, &files);
    assert!(!not_ready.ready);
    assert_eq!(not_ready.reason, NOT_READY_REASON);
    assert_eq!(
        not_ready.message,
        "cni config not usable: 10-broken.conflist: plugins[0].ipam.subnet: \"10.244.1.0\" is not a CIDR block (address/prefix)"
    );
}
