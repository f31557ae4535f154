//! The static pod source's failpoint: a fault injected into the scan stops the actor with
//! the fault as its exit reason, so its supervisor restarts it. (A file of its own: failpoints
//! are process-wide.)

#![cfg(feature = "failpoints")]

use std::time::{Duration, Instant};

use actix::Actor;
use sergeant_actors::config_feed::feed;
use sergeant_actors::sources::StaticPodSource;
use sergeant_config::{FlagOverrides, NodeConfig};
use sergeant_messages::pods::{PodSource, SourceSnapshot};
use sergeant_supervisor::ChildEnv;
use tokio::sync::watch;

#[test]
fn an_injected_scan_fault_stops_the_actor() {
    let scenario = fail::FailScenario::setup();
    fail::cfg("sources::scan", "return(disk on fire)").unwrap();
    actix_rt::System::new().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: {}\n",
            dir.path().display()
        );
        let flags = FlagOverrides {
            hostname_override: Some("node-a".into()),
            ..FlagOverrides::default()
        };
        let config = feed("test".into(), NodeConfig::parse(&text, "test", &flags).unwrap());
        let (out, snapshots) = watch::channel(SourceSnapshot::unsynced(PodSource::File));
        let env = ChildEnv::new("root/pods/sources");
        let addr = StaticPodSource::new(&env, config.subscribe(), out).start();
        let deadline = Instant::now() + Duration::from_secs(3);
        while addr.connected() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!addr.connected(), "the actor kept running");
        assert_eq!(
            env.exit_reason().as_deref(),
            Some("fault injected at failpoint sources::scan: disk on fire")
        );
        assert!(!snapshots.borrow().synced);
    });
    scenario.teardown();
}
