//! Table tests of the Linux CNI check and of the directories read from the runtime's status:
//! good lists and single networks pass, each broken one is named by file, field and reason,
//! and a plugin whose binary the runtime lacks is named with the directories looked in.

use super::linux::{check_linux_config, linux_readiness, PluginBinaries};
use super::runtime_dirs::RuntimeCniDirs;
use super::{ConfigFile, NOT_READY_REASON};

/// A bridge network with port mapping, as a node's network add-on might write it.
const BRIDGE_LIST: &str = r#"{
  "cniVersion": "1.0.0",
  "name": "podnet",
  "plugins": [
    { "type": "bridge", "bridge": "cni0", "isGateway": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.88.0.0/16" }]] } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}"#;

/// A single network in a `.conf` file.
const PTP_CONF: &str = r#"{
  "cniVersion": "0.4.0",
  "name": "ptpnet",
  "type": "ptp",
  "ipam": { "type": "host-local", "subnet": "10.1.0.0/24" }
}"#;

/// The binaries of a typical plugin directory.
fn binaries() -> PluginBinaries {
    PluginBinaries {
        dirs: vec!["/opt/cni/bin".to_owned()],
        names: ["bridge", "host-local", "portmap", "ptp", "loopback"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
    }
}

fn edit(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "{from} not in the base config");
    base.replacen(from, to, 1)
}

#[test]
fn good_lists_and_single_networks_pass() {
    let found = binaries();
    for (name, text) in [("10-pods.conflist", BRIDGE_LIST), ("10-ptp.conf", PTP_CONF)] {
        let file = ConfigFile { name, text };
        assert_eq!(check_linux_config(file, Some(&found)), Ok(()), "{name}");
        assert_eq!(check_linux_config(file, None), Ok(()), "{name}");
    }
}

#[test]
fn broken_configs_are_named_by_file_field_and_reason() {
    let found = binaries();
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("a.conflist", "{ not json".to_owned(), "", "not JSON"),
        (
            "a.conflist",
            "[1, 2]".to_owned(),
            "",
            "must be an object, not a list",
        ),
        (
            "a.conflist",
            edit(BRIDGE_LIST, r#""name": "podnet","#, ""),
            "name",
            "is missing",
        ),
        (
            "a.conflist",
            edit(BRIDGE_LIST, r#""name": "podnet""#, r#""name": " ""#),
            "name",
            "is empty",
        ),
        (
            "a.conflist",
            edit(BRIDGE_LIST, r#""cniVersion": "1.0.0","#, ""),
            "cniVersion",
            "is missing",
        ),
        (
            "a.conflist",
            r#"{"cniVersion":"1.0.0","name":"n","plugins":[]}"#.to_owned(),
            "plugins",
            "is empty",
        ),
        (
            "a.conflist",
            r#"{"cniVersion":"1.0.0","name":"n"}"#.to_owned(),
            "plugins",
            "is empty",
        ),
        (
            "a.conflist",
            r#"{"cniVersion":"1.0.0","name":"n","plugins":{}}"#.to_owned(),
            "plugins",
            "must be a list",
        ),
        (
            "a.conflist",
            r#"{"cniVersion":"1.0.0","name":"n","plugins":["bridge"]}"#.to_owned(),
            "plugins[0]",
            "must be an object, not a string",
        ),
        (
            "a.conflist",
            edit(BRIDGE_LIST, r#""type": "portmap", "#, ""),
            "plugins[1].type",
            "is missing",
        ),
        (
            "a.conflist",
            edit(BRIDGE_LIST, r#""type": "bridge""#, r#""type": 7"#),
            "plugins[0].type",
            "must be a string, not a number",
        ),
        (
            "a.conflist",
            edit(
                BRIDGE_LIST,
                r#""type": "portmap""#,
                r#""type": "portmapper""#,
            ),
            "plugins[1].type",
            r#"no plugin binary "portmapper" in /opt/cni/bin"#,
        ),
        (
            "b.conf",
            edit(PTP_CONF, r#""type": "ptp","#, ""),
            "type",
            "is missing",
        ),
        (
            "b.conf",
            edit(PTP_CONF, r#""name": "ptpnet","#, ""),
            "name",
            "is missing",
        ),
        (
            "b.conf",
            edit(PTP_CONF, r#""type": "ptp""#, r#""type": "macvlan""#),
            "type",
            r#"no plugin binary "macvlan" in /opt/cni/bin"#,
        ),
    ];
    for (name, text, field, reason) in &cases {
        let fault = check_linux_config(ConfigFile { name, text }, Some(&found))
            .expect_err(&format!("{name} {text} should fail"));
        assert_eq!(fault.file, *name, "{text}");
        assert_eq!(fault.field, *field, "{text}");
        assert!(fault.reason.contains(reason), "{text}: {}", fault.reason);
    }
}

#[test]
fn a_single_network_in_a_conf_file_needs_no_plugin_list() {
    // Read as one network by its extension, a `.conf` without `plugins` or `cniVersion` passes.
    let text = r#"{"name":"lo","type":"loopback"}"#;
    let file = ConfigFile {
        name: "99-lo.conf",
        text,
    };
    assert_eq!(check_linux_config(file, Some(&binaries())), Ok(()));
    let list = ConfigFile {
        name: "99-lo.conflist",
        text,
    };
    assert_eq!(
        check_linux_config(list, None).unwrap_err().field,
        "cniVersion"
    );
}

#[test]
fn binaries_are_not_checked_when_their_directories_are_unknown() {
    let text = edit(BRIDGE_LIST, r#""type": "bridge""#, r#""type": "nope""#);
    let file = ConfigFile {
        name: "10-pods.conflist",
        text: &text,
    };
    assert_eq!(check_linux_config(file, None), Ok(()));
    let none = PluginBinaries::default();
    let fault = check_linux_config(file, Some(&none)).unwrap_err();
    assert!(fault.reason.contains("names none"), "{}", fault.reason);
}

#[test]
fn readiness_checks_the_file_loaded_and_names_it() {
    let dir = "/etc/cni/net.d";
    let found = binaries();
    let broken = edit(BRIDGE_LIST, r#""type": "bridge""#, r#""type": "bridgex""#);
    let files = [
        ConfigFile {
            name: "20-later.conflist",
            text: &broken,
        },
        ConfigFile {
            name: "10-pods.conflist",
            text: BRIDGE_LIST,
        },
        ConfigFile {
            name: "README",
            text: "not a config",
        },
    ];
    assert!(linux_readiness(dir, &files, Some(&found)).ready);
    let files = [
        ConfigFile {
            name: "05-first.conflist",
            text: &broken,
        },
        ConfigFile {
            name: "10-pods.conflist",
            text: BRIDGE_LIST,
        },
    ];
    let not_ready = linux_readiness(dir, &files, Some(&found));
    assert!(!not_ready.ready);
    assert_eq!(not_ready.reason, NOT_READY_REASON);
    assert_eq!(
        not_ready.message,
        r#"cni config not usable: 05-first.conflist: plugins[0].type: no plugin binary "bridgex" in /opt/cni/bin"#
    );
    let empty = linux_readiness(
        dir,
        &[ConfigFile {
            name: "notes.txt",
            text: "",
        }],
        Some(&found),
    );
    assert!(!empty.ready);
    assert!(
        empty.message.contains("no network config") && empty.message.contains(dir),
        "{}",
        empty.message
    );
}

#[test]
fn runtime_dirs_come_from_the_status_config() {
    // containerd 1.6 as it answers here: one binDir.
    let one = r#"{"cni":{"binDir":"/usr/lib/cni","confDir":"/etc/cni/net.d","maxConfNum":1}}"#;
    assert_eq!(
        RuntimeCniDirs::from_status_config(one).unwrap(),
        RuntimeCniDirs {
            conf_dir: Some("/etc/cni/net.d".to_owned()),
            bin_dirs: vec!["/usr/lib/cni".to_owned()],
        }
    );
    // A runtime taking several binary directories lists them all, in order.
    let many = r#"{"cni":{"binDir":"","binDirs":["/opt/cni/bin","/usr/lib/cni"],"confDir":"/x"}}"#;
    let dirs = RuntimeCniDirs::from_status_config(many).unwrap();
    assert_eq!(dirs.bin_dirs, ["/opt/cni/bin", "/usr/lib/cni"]);
    // A runtime that names nothing (no cni object, empty strings) names nothing.
    for silent in [
        r#"{}"#,
        r#"{"cni":{"confDir":"","binDir":""}}"#,
        r#"{"cni":null}"#,
    ] {
        assert_eq!(
            RuntimeCniDirs::from_status_config(silent).unwrap(),
            RuntimeCniDirs::default(),
            "{silent}"
        );
    }
    assert!(RuntimeCniDirs::from_status_config("not json").is_err());
}
