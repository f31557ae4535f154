//! `tlsCipherSuites`: the cipher suites the kubelet API may negotiate, written with the names
//! Go's `crypto/tls` (and so upstream's kubelet) gives them. Only the suites sergeant's TLS
//! library can serve parse; a known Go name it will not serve is refused with the reason
//! (broken cipher, CBC mode, no forward secrecy), an unknown one with the supported names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ParseError;
use crate::serde_error::suggest;
use crate::text::{deserialize_parsed, Scalars};

/// A cipher suite the kubelet API can be limited to: an AEAD suite with forward secrecy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CipherSuite {
    /// TLS 1.3 `TLS_AES_128_GCM_SHA256`.
    Aes128GcmSha256,
    /// TLS 1.3 `TLS_AES_256_GCM_SHA384`.
    Aes256GcmSha384,
    /// TLS 1.3 `TLS_CHACHA20_POLY1305_SHA256`.
    Chacha20Poly1305Sha256,
    /// TLS 1.2 `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`.
    EcdheEcdsaAes128GcmSha256,
    /// TLS 1.2 `TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384`.
    EcdheEcdsaAes256GcmSha384,
    /// TLS 1.2 `TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256`.
    EcdheEcdsaChacha20Poly1305Sha256,
    /// TLS 1.2 `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`.
    EcdheRsaAes128GcmSha256,
    /// TLS 1.2 `TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`.
    EcdheRsaAes256GcmSha384,
    /// TLS 1.2 `TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256`.
    EcdheRsaChacha20Poly1305Sha256,
}

/// Go's older spellings of two suites, which upstream still accepts.
const ALIASES: [(&str, CipherSuite); 2] = [
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        CipherSuite::EcdheEcdsaChacha20Poly1305Sha256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
        CipherSuite::EcdheRsaChacha20Poly1305Sha256,
    ),
];

/// The other suites Go knows: valid in an upstream configuration, refused here.
const REFUSED: [&str; 16] = [
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
];

impl CipherSuite {
    /// Every suite, in upstream's order of preference.
    pub const ALL: [CipherSuite; 9] = [
        CipherSuite::Aes128GcmSha256,
        CipherSuite::Aes256GcmSha384,
        CipherSuite::Chacha20Poly1305Sha256,
        CipherSuite::EcdheEcdsaAes128GcmSha256,
        CipherSuite::EcdheRsaAes128GcmSha256,
        CipherSuite::EcdheEcdsaAes256GcmSha384,
        CipherSuite::EcdheRsaAes256GcmSha384,
        CipherSuite::EcdheEcdsaChacha20Poly1305Sha256,
        CipherSuite::EcdheRsaChacha20Poly1305Sha256,
    ];

    /// The name Go and upstream's configuration give the suite (also its IANA name).
    #[must_use]
    pub fn go_name(self) -> &'static str {
        match self {
            CipherSuite::Aes128GcmSha256 => "TLS_AES_128_GCM_SHA256",
            CipherSuite::Aes256GcmSha384 => "TLS_AES_256_GCM_SHA384",
            CipherSuite::Chacha20Poly1305Sha256 => "TLS_CHACHA20_POLY1305_SHA256",
            CipherSuite::EcdheEcdsaAes128GcmSha256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            CipherSuite::EcdheEcdsaAes256GcmSha384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            CipherSuite::EcdheEcdsaChacha20Poly1305Sha256 => {
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
            }
            CipherSuite::EcdheRsaAes128GcmSha256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            CipherSuite::EcdheRsaAes256GcmSha384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            CipherSuite::EcdheRsaChacha20Poly1305Sha256 => {
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
            }
        }
    }

    /// The protocol version the suite belongs to: TLS 1.3 suites and TLS 1.2 suites are
    /// disjoint.
    #[must_use]
    pub fn version(self) -> TlsVersion {
        match self {
            CipherSuite::Aes128GcmSha256
            | CipherSuite::Aes256GcmSha384
            | CipherSuite::Chacha20Poly1305Sha256 => TlsVersion::VersionTLS13,
            _ => TlsVersion::VersionTLS12,
        }
    }
}

/// Why a suite Go knows is not served.
fn refusal(name: &str) -> &'static str {
    if name.contains("RC4") {
        "RC4 is broken (RFC 7465 forbids it)"
    } else if name.contains("3DES") {
        "3DES has a 64-bit block and falls to Sweet32"
    } else if name.contains("CBC") {
        "CBC mode is open to padding-oracle attacks (Lucky Thirteen); use an AEAD (GCM or \
         CHACHA20_POLY1305) suite"
    } else {
        "RSA key exchange has no forward secrecy; use an ECDHE suite"
    }
}

impl fmt::Display for CipherSuite {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.go_name())
    }
}

impl FromStr for CipherSuite {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let known = Self::ALL.into_iter().map(|suite| (suite.go_name(), suite));
        if let Some((_, suite)) = known.chain(ALIASES).find(|(name, _)| *name == text) {
            return Ok(suite);
        }
        if REFUSED.contains(&text) {
            return Err(ParseError::new(format!(
                "cipher suite \"{text}\" is refused as insecure: {}",
                refusal(text)
            )));
        }
        let names: Vec<&str> = Self::ALL.iter().map(|suite| suite.go_name()).collect();
        let hint = suggest(text, &names)
            .map(|name| format!(" (did you mean \"{name}\"?)"))
            .unwrap_or_default();
        Err(ParseError::new(format!(
            "unknown cipher suite \"{text}\"{hint}; supported: {}",
            names.join(", ")
        )))
    }
}

impl Serialize for CipherSuite {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.go_name())
    }
}

impl<'de> Deserialize<'de> for CipherSuite {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "a cipher suite name such as \"TLS_AES_128_GCM_SHA256\"",
            Scalars::StringsOnly,
        )
    }
}

/// Lowest TLS protocol version, spelled as upstream spells it. TLS 1.0 and 1.1 parse (upstream
/// accepts them) but are refused by validation: sergeant cannot serve them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TlsVersion {
    /// TLS 1.0
    VersionTLS10,
    /// TLS 1.1
    VersionTLS11,
    /// TLS 1.2
    VersionTLS12,
    /// TLS 1.3
    VersionTLS13,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{diff, FlagOverrides, NodeConfig};

    const HEAD: &str = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

    fn parse(extra: &str) -> Result<NodeConfig, crate::ConfigError> {
        NodeConfig::parse(
            &format!("{HEAD}{extra}"),
            "k.yaml",
            &FlagOverrides::default(),
        )
    }

    fn refused(extra: &str) -> (Option<String>, String) {
        let error = parse(extra).unwrap_err();
        (error.field().map(str::to_owned), error.to_string())
    }

    #[test]
    fn every_name_round_trips_and_the_old_chacha_names_are_accepted() {
        for suite in CipherSuite::ALL {
            assert_eq!(suite.go_name().parse::<CipherSuite>(), Ok(suite));
        }
        let config = parse(
            "tlsCipherSuites: [TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305, TLS_AES_256_GCM_SHA384]\n\
             tlsMinVersion: VersionTLS13\n",
        )
        .unwrap();
        assert_eq!(
            config.kubelet.tls_cipher_suites,
            [
                CipherSuite::EcdheRsaChacha20Poly1305Sha256,
                CipherSuite::Aes256GcmSha384
            ]
        );
        assert_eq!(
            config.kubelet.tls_min_version,
            Some(TlsVersion::VersionTLS13)
        );
    }

    #[test]
    fn an_unknown_name_is_refused_naming_the_field_entry_and_the_supported_names() {
        let (field, message) =
            refused("tlsCipherSuites:\n- TLS_AES_128_GCM_SHA256\n- TLS_AES_128_GCM_SHA265\n");
        assert_eq!(field.as_deref(), Some("tlsCipherSuites[1]"));
        assert!(
            message.starts_with(
                "k.yaml:5:3: tlsCipherSuites[1]: unknown cipher suite \"TLS_AES_128_GCM_SHA265\" \
                 (did you mean \"TLS_AES_128_GCM_SHA256\"?); supported: TLS_AES_128_GCM_SHA256, "
            ),
            "{message}"
        );
    }

    #[test]
    fn insecure_go_suites_are_refused_with_the_reason() {
        for (name, reason) in [
            ("TLS_ECDHE_RSA_WITH_RC4_128_SHA", "RC4 is broken"),
            ("TLS_RSA_WITH_3DES_EDE_CBC_SHA", "Sweet32"),
            ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "CBC mode"),
            ("TLS_RSA_WITH_AES_256_GCM_SHA384", "no forward secrecy"),
        ] {
            let (field, message) = refused(&format!("tlsCipherSuites: [{name}]\n"));
            assert_eq!(field.as_deref(), Some("tlsCipherSuites[0]"), "{message}");
            assert!(
                message.contains(&format!(
                    "tlsCipherSuites[0]: cipher suite \"{name}\" is refused as insecure: "
                )) && message.contains(reason),
                "{message}"
            );
        }
    }

    #[test]
    fn tls_below_1_2_is_refused_naming_the_field_and_why() {
        for version in ["VersionTLS10", "VersionTLS11"] {
            let (field, message) = refused(&format!("tlsMinVersion: {version}\n"));
            assert_eq!(field.as_deref(), Some("tlsMinVersion"));
            assert_eq!(
                message,
                format!(
                    "k.yaml:3:1: tlsMinVersion: {version} cannot be served: sergeant's TLS \
                     library (rustls) speaks TLS 1.2 and 1.3 only; use VersionTLS12 or VersionTLS13"
                )
            );
        }
    }

    #[test]
    fn changing_either_setting_requires_a_restart() {
        let before = parse("").unwrap();
        for extra in [
            "tlsMinVersion: VersionTLS13\n",
            "tlsCipherSuites: [TLS_AES_128_GCM_SHA256]\n",
        ] {
            let changes = diff(&before, &parse(extra).unwrap());
            assert!(changes.requires_restart(), "{extra}: {changes:?}");
        }
    }
}
