//! The Windows CNI plugins' configurations, checked before a pod needs them: `win-bridge` and
//! `win-overlay` (the CNI project's HNS plugins), `sdnbridge`, `sdnoverlay` and `nat`
//! (Microsoft's), alone or as `flannel`'s delegate. A file passes when the plugin would accept
//! it and the pods it networks would work: an IPAM where the plugin needs one, a DNS server
//! from the file or from the runtime, endpoint policies of the shape the plugin's HNS API
//! version reads. Entry point: [`windows_readiness`].

use serde_json::Value;

use super::json::{cidr, cidr_only, cidr_or_ip, ip, Fault, Obj};
use super::{readiness, ConfigFault, ConfigFile, NetworkReadiness};

/// A Windows network plugin, by its `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowsPlugin {
    /// `win-bridge`: an L2Bridge (or L2Tunnel) HNS network.
    WinBridge,
    /// `win-overlay`: a VXLAN overlay HNS network.
    WinOverlay,
    /// `sdnbridge`: Microsoft's L2Bridge plugin.
    SdnBridge,
    /// `sdnoverlay`: Microsoft's overlay plugin.
    SdnOverlay,
    /// `nat`: Microsoft's NAT network plugin.
    Nat,
}

/// Every plugin `type` this module knows, for messages.
const KNOWN: &str =
    "win-bridge, win-overlay, sdnbridge, sdnoverlay, nat, or flannel delegating to one";

impl WindowsPlugin {
    /// The plugin a `type` names.
    #[must_use]
    pub fn from_type(kind: &str) -> Option<Self> {
        Some(match kind {
            "win-bridge" => Self::WinBridge,
            "win-overlay" => Self::WinOverlay,
            "sdnbridge" => Self::SdnBridge,
            "sdnoverlay" => Self::SdnOverlay,
            "nat" => Self::Nat,
            _ => return None,
        })
    }

    /// Its `type`.
    #[must_use]
    pub fn type_name(self) -> &'static str {
        match self {
            Self::WinBridge => "win-bridge",
            Self::WinOverlay => "win-overlay",
            Self::SdnBridge => "sdnbridge",
            Self::SdnOverlay => "sdnoverlay",
            Self::Nat => "nat",
        }
    }

    /// The HNS network mode it attaches pods to.
    #[must_use]
    pub fn mode(self) -> &'static str {
        match self {
            Self::WinBridge | Self::SdnBridge => "l2bridge",
            Self::WinOverlay | Self::SdnOverlay => "overlay",
            Self::Nat => "nat",
        }
    }
}

/// A configuration that passed: the network's name and its plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowsNetwork {
    /// The network's `name` (the HNS network the plugin attaches to).
    pub name: String,
    /// The plugin that attaches pods.
    pub plugin: WindowsPlugin,
}

/// The node's `NetworkReady` from the files of its CNI configuration directory `dir`: the file
/// the runtime loads must be a usable Windows network ([`readiness`] with
/// [`check_windows_config`]).
#[must_use]
pub fn windows_readiness(dir: &str, files: &[ConfigFile<'_>]) -> NetworkReadiness {
    readiness(dir, files, check_windows_config)
}

/// Checks one configuration file (a `.conflist`, or a single network `.conf`).
///
/// # Errors
/// The first fault found, naming the file, the field and the reason.
pub fn check_windows_config(file: ConfigFile<'_>) -> Result<WindowsNetwork, ConfigFault> {
    let fault = |(field, reason): Fault| ConfigFault {
        file: file.name.to_owned(),
        field,
        reason,
    };
    let value: Value = serde_json::from_str(file.text).map_err(|err| ConfigFault {
        file: file.name.to_owned(),
        field: String::new(),
        reason: format!("not JSON: {err}"),
    })?;
    check_document(&value).map_err(fault)
}

/// The whole document: a list's header and first plugin, or a single network.
fn check_document(value: &Value) -> Result<WindowsNetwork, Fault> {
    let top = Obj::at(String::new(), value)?;
    let plugin = if top.get("plugins").is_some() {
        top.str("cniVersion")?;
        let plugins = top.objects("plugins")?;
        plugins
            .into_iter()
            .next()
            .ok_or_else(|| top.fault("plugins", "is empty: no plugin networks the pods"))?
    } else {
        top.clone()
    };
    let name = top.str("name")?.to_owned();
    let outer = plugin;
    let kind = outer.str("type")?;
    // flannel hands its delegate the network and the runtime's configuration.
    let (plugin, obj) = if kind == "flannel" {
        let delegate = outer.obj("delegate")?;
        let kind = delegate.str("type")?;
        (known(&delegate, kind)?, delegate)
    } else {
        (known(&outer, kind)?, outer.clone())
    };
    match plugin {
        WindowsPlugin::WinBridge | WindowsPlugin::WinOverlay => check_hns(&obj, plugin)?,
        WindowsPlugin::SdnBridge | WindowsPlugin::SdnOverlay | WindowsPlugin::Nat => {
            check_sdn(&obj, plugin)?;
        }
    }
    check_dns(&obj, &outer)?;
    Ok(WindowsNetwork { name, plugin })
}

fn known(obj: &Obj<'_>, kind: &str) -> Result<WindowsPlugin, Fault> {
    WindowsPlugin::from_type(kind).ok_or_else(|| {
        obj.fault(
            "type",
            format!("{kind:?} is not a Windows network plugin ({KNOWN})"),
        )
    })
}

/// `win-bridge` and `win-overlay`: `ApiVersion` 1 (HNS, `policies`) or 2 (HCN,
/// `HcnPolicyArgs`), the IPAM the plugin runs, the overlay's MAC prefix.
fn check_hns(obj: &Obj<'_>, plugin: WindowsPlugin) -> Result<(), Fault> {
    let api = match obj.get("ApiVersion") {
        None | Some(Value::Null) => 1,
        Some(Value::Number(n)) if n.as_u64() == Some(1) || n.as_u64() == Some(2) => {
            n.as_u64().unwrap_or(1)
        }
        Some(other) => {
            return Err(obj.fault(
                "ApiVersion",
                format!("must be 1 (HNS) or 2 (HCN), not {other}"),
            ))
        }
    };
    let overlay = plugin == WindowsPlugin::WinOverlay;
    // win-bridge may leave addresses to HNS; win-overlay always runs its IPAM plugin.
    match obj.opt_obj("ipam")? {
        Some(ipam) => {
            if overlay {
                ipam.str("type")?;
            }
            if let Some(subnet) = ipam.opt_str("subnet")? {
                let addr = cidr(subnet).map_err(|reason| ipam.fault("subnet", reason))?;
                if overlay && addr.is_ipv6() {
                    return Err(ipam.fault("subnet", "win-overlay supports IPv4 only"));
                }
            }
        }
        None if overlay => {
            return Err(obj.fault("ipam", "is missing: win-overlay needs an IPAM plugin"))
        }
        None => {}
    }
    let (used, ignored) = if api == 2 {
        ("HcnPolicyArgs", "policies")
    } else {
        ("policies", "HcnPolicyArgs")
    };
    if !obj.array(ignored)?.is_empty() {
        return Err(obj.fault(
            ignored,
            format!("is not read with ApiVersion {api}, which reads {used}: these policies would be dropped"),
        ));
    }
    if api == 2 {
        for policy in obj.objects("HcnPolicyArgs")? {
            check_endpoint_policy(&policy)?;
        }
    } else {
        for policy in obj.objects("policies")? {
            check_hns_policy(&policy, plugin)?;
        }
    }
    if overlay {
        if let Some(prefix) = obj.opt_str("endpointMacPrefix")? {
            let bytes = prefix.as_bytes();
            let hex = |b: &u8| b.is_ascii_hexdigit();
            let well_formed = bytes.len() == 5
                && bytes[2] == b'-'
                && bytes[..2].iter().all(hex)
                && bytes[3..].iter().all(hex);
            if !well_formed {
                return Err(obj.fault(
                    "endpointMacPrefix",
                    format!("{prefix:?} must be of the form xx-xx (hex)"),
                ));
            }
        }
    }
    Ok(())
}

/// One `policies` entry of an HNS v1 plugin: `{"name": "EndpointPolicy", "value": {"Type": …}}`.
fn check_hns_policy(policy: &Obj<'_>, plugin: WindowsPlugin) -> Result<(), Fault> {
    let name = policy.str("name")?;
    if !name.eq_ignore_ascii_case("EndpointPolicy") {
        return Err(policy.fault(
            "name",
            format!(
                "{name:?} is ignored by {} (only EndpointPolicy entries are applied)",
                plugin.type_name()
            ),
        ));
    }
    let value = policy.obj("value")?;
    let kind = value.str("Type")?;
    if kind.eq_ignore_ascii_case("OutBoundNAT") {
        value.strings("ExceptionList", cidr_or_ip)?;
    } else if kind.eq_ignore_ascii_case("ROUTE") {
        let prefix = value.str("DestinationPrefix")?;
        cidr_only(prefix).map_err(|reason| value.fault("DestinationPrefix", reason))?;
        value.flag("NeedEncap")?;
    }
    Ok(())
}

/// An HCN endpoint policy, `{"Type": …, "Settings": {…}}` (`HcnPolicyArgs` entries, and the
/// `value` of Microsoft plugins' `AdditionalArgs`).
fn check_endpoint_policy(policy: &Obj<'_>) -> Result<(), Fault> {
    let kind = policy.str("Type")?;
    let settings = policy.opt_obj("Settings")?;
    let needs = |key: &str| -> Result<&str, Fault> {
        match &settings {
            Some(settings) => settings.str(key),
            None => Err(policy.fault(
                "Settings",
                format!("is missing: {kind} needs Settings.{key}"),
            )),
        }
    };
    if kind.eq_ignore_ascii_case("OutBoundNAT") {
        if let Some(settings) = &settings {
            settings.strings("Exceptions", cidr_or_ip)?;
        }
    } else if kind.eq_ignore_ascii_case("SDNRoute") {
        let prefix = needs("DestinationPrefix")?;
        cidr_only(prefix).map_err(|reason| {
            (
                format!("{}.DestinationPrefix", policy.path_of("Settings")),
                reason.to_string(),
            )
        })?;
    } else if kind.eq_ignore_ascii_case("ProviderAddress") {
        let address = needs("ProviderAddress")?;
        ip(address).map_err(|reason| {
            (
                format!("{}.ProviderAddress", policy.path_of("Settings")),
                reason.to_string(),
            )
        })?;
    }
    Ok(())
}

/// `sdnbridge`, `sdnoverlay` and `nat`: the subnet the network's addresses come from, and the
/// `AdditionalArgs` policies.
fn check_sdn(obj: &Obj<'_>, plugin: WindowsPlugin) -> Result<(), Fault> {
    let ipam = obj.opt_obj("ipam")?;
    let subnets = match &ipam {
        Some(ipam) => sdn_subnets(ipam)?,
        None => 0,
    };
    if subnets == 0 && plugin != WindowsPlugin::Nat {
        let field = if ipam.is_some() {
            "ipam.subnet"
        } else {
            "ipam"
        };
        return Err(obj.fault(
            field,
            format!(
                "is missing: {} takes pod addresses from ipam.subnet or ipam.ranges",
                plugin.type_name()
            ),
        ));
    }
    for arg in obj.objects("AdditionalArgs")? {
        let name = arg.str("Name")?;
        if name.contains("Policy") {
            check_endpoint_policy(&arg.obj("Value")?)?;
        }
    }
    Ok(())
}

/// The subnets of a Microsoft plugin's IPAM (`subnet`, or `ranges` of `{subnet, gateway}`),
/// each checked; how many there are.
fn sdn_subnets(ipam: &Obj<'_>) -> Result<usize, Fault> {
    let mut count = 0;
    if let Some(subnet) = ipam.opt_str("subnet")? {
        cidr_only(subnet).map_err(|reason| ipam.fault("subnet", reason))?;
        count += 1;
    }
    for (n, set) in ipam.array("ranges")?.iter().enumerate() {
        let path = format!("{}.ranges[{n}]", ipam.path);
        let Value::Array(ranges) = set else {
            return Err((
                path,
                "must be a list of {subnet, gateway} ranges".to_owned(),
            ));
        };
        for (m, range) in ranges.iter().enumerate() {
            let range = Obj::at(format!("{path}[{m}]"), range)?;
            cidr_only(range.str("subnet")?).map_err(|reason| range.fault("subnet", reason))?;
            if let Some(gateway) = range.opt_str("gateway")? {
                ip(gateway).map_err(|reason| range.fault("gateway", reason))?;
            }
            count += 1;
        }
    }
    for route in ipam.objects("routes")? {
        if let Some(gateway) = route.opt_str("GW")? {
            ip(gateway).map_err(|reason| route.fault("GW", reason))?;
        }
    }
    Ok(count)
}

/// A pod's DNS server comes from the network's file (`dns.Nameservers` of `network`) or from
/// the runtime, which passes the pod's DNS only to a plugin entry (`entry`) declaring
/// `capabilities.dns`.
fn check_dns(network: &Obj<'_>, entry: &Obj<'_>) -> Result<(), Fault> {
    let servers = match network.opt_obj("dns")? {
        Some(dns) => dns.strings("nameservers", ip)?.len(),
        None => 0,
    };
    let from_runtime = match entry.opt_obj("capabilities")? {
        Some(capabilities) => capabilities.flag("dns")?,
        None => false,
    };
    if servers == 0 && !from_runtime {
        return Err(network.fault(
            "dns.Nameservers",
            "is empty and capabilities.dns is not true: pods would get no DNS server",
        ));
    }
    Ok(())
}
