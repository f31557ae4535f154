// Package conformance is a trimmed e2e.test: upstream's suite (k8s.io/kubernetes/test/e2e, whose
// non-test files hold the suite setup) linked with only the spec packages where the
// [NodeConformance] specs of the pinned release live. Linking the whole test/e2e tree would
// compile every SIG's specs for nothing. tests/conformance/build.sh copies this file into its
// module in the cache and builds it with `go test -c`.
package conformance

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/component-base/logs"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"

	// The suite itself: its SynchronizedBeforeSuite/AfterSuite (namespace cleanup, node
	// readiness, cluster IP family) live in the package's non-test files.
	_ "k8s.io/kubernetes/test/e2e"

	// The spec packages: common/{node,storage,network} (through test/e2e/common) hold all but
	// one [NodeConformance] spec; apps holds the Job spec on container restart rules.
	_ "k8s.io/kubernetes/test/e2e/apps"
	_ "k8s.io/kubernetes/test/e2e/common"
	_ "k8s.io/kubernetes/test/e2e/feature"

	// Framework plug-ins that the full suite installs the same way: failure dumps, metrics
	// gathering and node helpers.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
)

// specTimeout bounds the context ginkgo hands to every spec node (It, BeforeEach, AfterEach,
// DeferCleanup...): ginkgo has no command-line timeout per spec, and a spec that waits on a
// behaviour the node lacks would otherwise hold the run until the suite timeout.
var specTimeout = flag.Duration("spec-timeout", 30*time.Minute,
	"deadline of the context of each spec node (0: none); a node past it fails with a context error")

// TestMain registers the suite's flags (the framework's and the per-spec config ones), applies
// them, and runs the tests; --version prints the release the binary was built from.
func TestMain(m *testing.M) {
	showVersion := flag.Bool("version", false, "print the Kubernetes version of this binary and exit")
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Get().GitVersion)
		os.Exit(0)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// TestE2E runs the specs the way upstream's RunE2ETests does (contextual logging on, the
// framework's fail handler, its ginkgo configuration), plus the per-node deadline.
func TestE2E(t *testing.T) {
	logs.InitLogs()
	defer logs.FlushLogs()
	klog.EnableContextualLogging(true)
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "Kubernetes e2e suite", suiteConfig, reporterConfig, ginkgo.AroundNode(boundNode))
}

// boundNode gives a node's context the --spec-timeout deadline. The cancel function is dropped
// on purpose: ginkgo cancels the node's own context when the node ends, which releases the
// child's timer too.
func boundNode(ctx context.Context) context.Context {
	if *specTimeout <= 0 {
		return ctx
	}
	bounded, _ := context.WithTimeout(ctx, *specTimeout) // build.sh builds with -vet=off for this
	return bounded
}
