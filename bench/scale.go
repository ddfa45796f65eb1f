package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"example.com/k8s-demo/e2e/process"
)

// scaleResult is the articles' `kubectl scale` step, timed: from the scale
// request to a converged status and exactly that many live pods.
type scaleResult struct {
	Impl     string
	Up, Down time.Duration // medians of the rounds
	Rounds   int
}

func (b *bench) scale(ctx context.Context, im implementation, q qpsSetting, rounds int) (res scaleResult, err error) {
	res = scaleResult{Impl: im.name, Rounds: rounds}
	b.logf("%s: scale 1 → 3 → 1, %d rounds", im.name, rounds)
	st, err := b.setUp(ctx, im, "scale")
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := st.tearDown(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	ns := st.ns
	p, err := b.startController(st, im, q, "")
	if err != nil {
		return res, err
	}
	defer func() { _ = p.Stop() }()

	cp := customPods.object(0)
	_ = unstructured.SetNestedField(cp.Object, int64(1), "spec", "replicas")
	if _, err := b.dyn.Resource(customPods.gvr).Namespace(ns).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		return res, err
	}
	if _, err := b.waitScaled(ctx, ns, cp.GetName(), 1, p); err != nil {
		return res, err
	}
	var ups, downs []time.Duration
	for range rounds {
		for _, target := range []int64{3, 1} {
			start := time.Now()
			patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, target)
			if _, err := b.dyn.Resource(customPods.gvr).Namespace(ns).Patch(ctx, cp.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
				return res, err
			}
			if _, err := b.waitScaled(ctx, ns, cp.GetName(), target, p); err != nil {
				return res, err
			}
			d := time.Since(start)
			if target == 3 {
				ups = append(ups, d)
			} else {
				downs = append(downs, d)
			}
		}
	}
	res.Up, res.Down = median(ups), median(downs)
	b.logf("  %s: scale 1 → 3 in %s, 3 → 1 in %s (medians of %d)", im.name, res.Up.Round(time.Millisecond), res.Down.Round(time.Millisecond), rounds)
	return res, nil
}

// waitScaled polls until the CustomPod's status says want replicas, all
// ready, for its generation, and exactly want pods are live (not terminating).
func (b *bench) waitScaled(ctx context.Context, ns, name string, want int64, p *process.Process) (time.Duration, error) {
	start := time.Now()
	var live int64
	var status any
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := b.dyn.Resource(customPods.gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		status = u.Object["status"]
		if !customPods.converged(u) {
			return false, nil
		}
		if r, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas"); r != want {
			return false, nil
		}
		pods, err := b.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		live = 0
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil {
				live++
			}
		}
		return live == want, nil
	})
	if err != nil {
		return 0, fmt.Errorf("scaling %s/%s to %d: %d live pods, status %v\n%s", ns, name, want, live, status, tail(p))
	}
	return time.Since(start), nil
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
