//! The authenticated kubelet API on `port`, straight over TLS against a sergeant in managed
//! mode and the real control plane: client certificates signed by the cluster CA, bearer
//! tokens checked with TokenReview, every request authorized with SubjectAccessReview; the
//! protocol versions and cipher suites it negotiates (`tlsMinVersion`, `tlsCipherSuites`).

mod common;

use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::version::{TLS12, TLS13};
use tokio_rustls::rustls::{
    CipherSuite, ClientConfig, ClientConnection, ProtocolVersion, RootCertStore,
    SupportedProtocolVersion,
};

use common::cluster::Cluster;
use common::node::{manifest, POD_DEADLINE, SHELL};
use common::{wait_for, Agent, TestConfig};

/// Every path the API serves or might serve: all of them need credentials.
const PATHS: [&str; 10] = [
    "/healthz",
    "/pods",
    "/metrics",
    "/metrics/probes",
    "/configz",
    "/stats/summary",
    "/containerLogs/default/p/c",
    "/exec/default/p/c",
    "/runningpods/",
    "/no-such-path",
];

/// A managed sergeant trusting the cluster CA for client certificates.
struct Secured {
    agent: Agent,
    base: String,
    cluster: Cluster,
    node: String,
}

impl Secured {
    fn start(tag: &str) -> Self {
        Self::start_with(tag, "")
    }

    /// With `extra` lines in its KubeletConfiguration.
    fn start_with(tag: &str, extra: &str) -> Self {
        let cluster = Cluster::from_env();
        let node = format!("api-{tag}");
        let kubeconfig = cluster.node_kubeconfig(&node);
        let endpoint = std::env::var("SERGEANT_CRI_ENDPOINT")
            .expect("SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh");
        let config = TestConfig::new().kubelet(&format!(
            "containerRuntimeEndpoint: {endpoint}\nauthentication:\n  x509:\n    clientCAFile: {}\n{extra}",
            cluster.ca_cert().display()
        ));
        let kubeconfig = kubeconfig.to_string_lossy().into_owned();
        let agent = Agent::start_with_args(
            &config,
            &[],
            &["--hostname-override", &node, "--kubeconfig", &kubeconfig],
        );
        Self {
            agent,
            base: format!("https://127.0.0.1:{}", config.port),
            cluster,
            node,
        }
    }

    /// The status code of GET `path` with `identity` (PEM certificate and key) and `token`,
    /// or the error when no HTTP answer came.
    fn get(&self, path: &str, identity: Option<&[u8]>, token: Option<&str>) -> Result<u16, String> {
        self.request(reqwest::Method::GET, path, identity, token)
            .map(|(status, _)| status)
    }

    /// The status code and body of `method` `path` with `identity` and `token`.
    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        identity: Option<&[u8]>,
        token: Option<&str>,
    ) -> Result<(u16, String), String> {
        // The serving certificate is self-signed: these tests are about the client's side.
        let mut builder = reqwest::blocking::Client::builder()
            .use_rustls_tls()
            .danger_accept_invalid_certs(true);
        if let Some(pem) = identity {
            builder = builder.identity(reqwest::Identity::from_pem(pem).expect("a PEM identity"));
        }
        let client = builder.build().expect("an HTTPS client");
        let mut request = client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().map_err(|e| format!("{e:?}"))?;
        let status = response.status().as_u16();
        Ok((status, response.text().map_err(|e| format!("{e:?}"))?))
    }

    /// A TLS handshake with the API by a client offering only `version` and `suite` and
    /// trusting the agent's self-signed certificate: what was negotiated, or why it failed.
    fn handshake(
        &self,
        version: &'static SupportedProtocolVersion,
        suite: CipherSuite,
    ) -> Result<(ProtocolVersion, CipherSuite), String> {
        let cert = self.agent.config_dir().join("root/pki/kubelet.crt");
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(&cert).expect("the serving certificate"))
            .expect("a trust anchor");
        let mut provider = ring::default_provider();
        provider.cipher_suites.retain(|s| s.suite() == suite);
        let config = ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(&[version])
            .expect("a client for that version and suite")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = ServerName::try_from("localhost").expect("a server name");
        let mut client = ClientConnection::new(Arc::new(config), name).expect("a TLS client");
        let mut tcp =
            TcpStream::connect(self.base.trim_start_matches("https://")).expect("a connection");
        tcp.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a read timeout");
        while client.is_handshaking() {
            client.complete_io(&mut tcp).map_err(|e| e.to_string())?;
        }
        Ok((
            client.protocol_version().expect("a version"),
            client.negotiated_cipher_suite().expect("a suite").suite(),
        ))
    }
}

#[test]
fn without_credentials_every_path_is_401() {
    let api = Secured::start("anon");
    for path in PATHS {
        assert_eq!(api.get(path, None, None), Ok(401), "{path}");
    }
    assert_eq!(
        api.get("/pods", None, Some("not-a-token")),
        Ok(401),
        "a bad token"
    );
}

#[test]
fn a_token_without_rights_is_403_and_one_with_kubelet_api_rights_is_200() {
    let api = Secured::start("tokens");
    let nobody = api.cluster.service_account_token("api-nobody", None);
    let admin = api
        .cluster
        .service_account_token("api-admin", Some("system:kubelet-api-admin"));
    for path in ["/pods", "/metrics", "/configz", "/healthz"] {
        assert_eq!(api.get(path, None, Some(&nobody)), Ok(403), "{path}");
        assert_eq!(api.get(path, None, Some(&admin)), Ok(200), "{path}");
    }
}

#[test]
fn the_cluster_admin_certificate_is_200_and_one_from_another_ca_is_refused() {
    let api = Secured::start("certs");
    let admin = api.cluster.admin_identity_pem();
    for path in ["/pods", "/metrics", "/metrics/probes", "/configz"] {
        assert_eq!(api.get(path, Some(&admin), None), Ok(200), "{path}");
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let stranger = foreign_identity(dir.path());
    let answer = api.get("/pods", Some(&stranger), None);
    assert!(
        answer.is_err() || answer == Ok(401),
        "a certificate from another CA gets nothing: {answer:?}"
    );
}

/// A `system:masters` client certificate signed by a CA the cluster does not know.
fn foreign_identity(dir: &Path) -> Vec<u8> {
    let openssl = |command: &str| {
        let args: Vec<&str> = command.split_whitespace().collect();
        let out = Command::new("openssl")
            .current_dir(dir)
            .args(&args)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // X.509 v3 with client-auth usage, as TLS libraries require of a client certificate.
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
    )
    .expect("the extensions file");
    openssl("req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -subj /CN=not-the-cluster-ca -days 1");
    openssl("req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=intruder/O=system:masters");
    openssl("x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1 -extfile client.ext");
    let mut pem = std::fs::read(dir.join("client.crt")).expect("the certificate");
    pem.extend(std::fs::read(dir.join("client.key")).expect("the key"));
    pem
}

#[test]
fn container_logs_and_run_answer_for_a_pod_and_refuse_bad_requests() {
    let manifests = tempfile::tempdir().expect("a manifest dir");
    let api = Secured::start_with(
        "logs",
        &format!("staticPodPath: {}\n", manifests.path().display()),
    );
    let spec = format!(
        "  containers:\n  - name: main\n    image: {SHELL}\n    \
         command: [sh, -c, 'for i in 1 2 3 4 5; do echo line $i; done; sleep 3600']\n"
    );
    std::fs::write(manifests.path().join("talk.yaml"), manifest("talk", &spec))
        .expect("manifest written");
    let admin = api.cluster.admin_identity_pem();
    let pod = format!("talk-{}", api.node);
    let logs = format!("/containerLogs/default/{pod}/main");
    let get = |path: &str| {
        api.request(reqwest::Method::GET, path, Some(&admin), None)
            .expect("an answer")
    };
    let all = wait_for("five lines logged", POD_DEADLINE, || {
        let (status, body) = get(&logs);
        (status == 200 && body.lines().count() == 5).then_some(body)
    });
    assert_eq!(all, "line 1\nline 2\nline 3\nline 4\nline 5\n");
    assert_eq!(
        get(&format!("{logs}?tailLines=2")),
        (200, "line 4\nline 5\n".to_owned())
    );
    assert_eq!(
        get(&format!("{logs}?limitBytes=8")),
        (200, "line 1\nl".to_owned())
    );
    let (status, stamped) = get(&format!("{logs}?timestamps=true&tailLines=1"));
    assert_eq!(status, 200);
    assert!(
        stamped.ends_with("Z line 5\n") && stamped.starts_with("20"),
        "{stamped:?}"
    );
    let (status, followed) = get(&format!("{logs}?follow=true&limitBytes=14"));
    assert_eq!((status, followed.as_str()), (200, "line 1\nline 2\n"));
    assert_eq!(get(&format!("{logs}?tailLines=-1")).0, 400);
    assert_eq!(get(&format!("{logs}?previous=true")).0, 400);
    assert_eq!(get(&format!("/containerLogs/default/{pod}/nope")).0, 404);
    assert_eq!(get("/containerLogs/default/no-such-pod/main").0, 404);

    let (status, running) = get("/runningpods/");
    assert_eq!(status, 200, "{running}");
    let running: serde_json::Value = serde_json::from_str(&running).expect("a PodList");
    let listed = running["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["metadata"]["name"] == pod.as_str())
        .cloned()
        .unwrap_or_default();
    assert_eq!(listed["spec"]["containers"][0]["name"], "main", "{running}");

    let run = format!("/run/default/{pod}/main?cmd=echo%20ran%20inside");
    let ran = api
        .request(reqwest::Method::POST, &run, Some(&admin), None)
        .expect("an answer");
    assert_eq!(ran, (200, "ran inside\n".to_owned()));
    let _ = std::fs::remove_file(manifests.path().join("talk.yaml"));
    wait_for("the pod to be gone", POD_DEADLINE, || {
        let (_, body) = get("/pods");
        (!body.contains(&pod)).then_some(())
    });
    drop(api.agent);
}

#[test]
fn idle_and_garbage_connections_do_not_starve_the_api() {
    let api = Secured::start("slow");
    let admin = api.cluster.admin_identity_pem();
    let address = api.base.trim_start_matches("https://").to_owned();
    // A hundred clients that connect and never finish a TLS handshake, and some that send
    // plain-text garbage instead of TLS.
    let idle: Vec<std::net::TcpStream> = (0..100)
        .map(|_| std::net::TcpStream::connect(&address).expect("a connection"))
        .collect();
    for _ in 0..10 {
        let mut garbage = std::net::TcpStream::connect(&address).expect("a connection");
        let _ = std::io::Write::write_all(&mut garbage, b"GET / HTTP/1.1\r\n\r\n");
    }
    let asked = std::time::Instant::now();
    assert_eq!(api.get("/healthz", Some(&admin), None), Ok(200));
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(5),
        "served beside the idle clients, in {:?}",
        asked.elapsed()
    );
    drop(idle);
}

#[test]
fn tls_min_version_1_3_refuses_a_tls_1_2_client() {
    let api = Secured::start_with("tls13", "tlsMinVersion: VersionTLS13\n");
    let suite = CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
    assert_eq!(
        api.handshake(&TLS12, suite),
        Err("received fatal alert: ProtocolVersion".to_owned())
    );
    let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    assert_eq!(
        api.handshake(&TLS13, suite),
        Ok((ProtocolVersion::TLSv1_3, suite))
    );
    let admin = api.cluster.admin_identity_pem();
    assert_eq!(api.get("/healthz", Some(&admin), None), Ok(200));
}

#[test]
fn tls_cipher_suites_limit_what_a_client_can_negotiate() {
    let api = Secured::start_with(
        "ciphers",
        "tlsCipherSuites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, TLS_AES_256_GCM_SHA384]\n",
    );
    let refused = Err("received fatal alert: HandshakeFailure".to_owned());
    for (version, offered, allowed) in [
        (
            &TLS12,
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            false,
        ),
        (
            &TLS12,
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            true,
        ),
        (&TLS13, CipherSuite::TLS13_AES_128_GCM_SHA256, false),
        (&TLS13, CipherSuite::TLS13_AES_256_GCM_SHA384, true),
    ] {
        let expected = if allowed {
            Ok((version.version, offered))
        } else {
            refused.clone()
        };
        assert_eq!(api.handshake(version, offered), expected, "{offered:?}");
    }
}
