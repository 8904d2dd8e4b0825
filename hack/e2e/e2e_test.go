// Package e2e runs Kubernetes' own [sig-scheduling] e2e specs (k8s.io/kubernetes
// test/e2e/scheduling) and nothing else: the upstream suite binary (test/e2e) links every
// SIG's tests, which costs build time and brings specs that cannot run on a kwok cluster.
//
// The flag handling and the suite setup follow upstream's test/e2e/e2e_test.go (TestMain)
// and test/e2e/e2e.go (RunE2ETests, setupSuite, setupSuitePerGinkgoNode), keeping only the
// steps that apply to a local cluster: no cloud provider, no image pre-pull, no system
// pods or daemonsets to wait for.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"
	utilnet "k8s.io/utils/net"

	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	e2enode "k8s.io/kubernetes/test/e2e/framework/node"

	// Defines and freezes the feature constants the specs' labels use.
	_ "k8s.io/kubernetes/test/e2e/feature"
	// The specs under test.
	_ "k8s.io/kubernetes/test/e2e/scheduling"

	// The framework's extensions that upstream's suite also loads: a namespace dump
	// when a spec fails, and the check after every spec that all nodes are still Ready.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"

	// The logging flags (-v and friends) on the command line, as upstream's suite has them.
	_ "k8s.io/component-base/logs/testinit"
)

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if flag.CommandLine.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unknown additional command line arguments: %s\n", flag.CommandLine.Args())
		os.Exit(1)
	}
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	// Upstream re-enables contextual logging after InitLogs turns it off (RunE2ETests).
	logs.InitLogs()
	defer logs.FlushLogs()
	klog.EnableContextualLogging(true)

	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "Kubernetes [sig-scheduling] e2e suite", suiteConfig, reporterConfig)
}

var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	// Upstream's setupSuite, minus the cloud and image steps: the specs count schedulable
	// nodes, so wait until every node is, and record how many there are.
	c, err := framework.LoadClientset()
	framework.ExpectNoError(err, "loading the client")
	timeouts := framework.NewTimeoutContext()
	framework.ExpectNoError(e2enode.WaitForAllNodesSchedulable(ctx, c, timeouts.NodeSchedulable))
	if framework.TestContext.CloudConfig.NumNodes == framework.DefaultNumNodes {
		nodes, err := e2enode.GetReadySchedulableNodes(ctx, c)
		framework.ExpectNoError(err)
		framework.TestContext.CloudConfig.NumNodes = len(nodes.Items)
	}
	if v, err := c.Discovery().ServerVersion(); err == nil {
		framework.Logf("kube-apiserver version: %s", v.GitVersion)
	}
	return nil
}, func(ctx context.Context, _ []byte) {
	// Upstream's setupSuitePerGinkgoNode: the cluster's IP family, from the kubernetes
	// service's ClusterIP; the host-port specs build addresses of that family.
	c, err := framework.LoadClientset()
	framework.ExpectNoError(err, "loading the client")
	svc, err := c.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	framework.ExpectNoError(err, "reading the kubernetes service")
	framework.TestContext.IPFamily = "ipv4"
	if utilnet.IsIPv6String(svc.Spec.ClusterIP) {
		framework.TestContext.IPFamily = "ipv6"
	}
})
