package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// summary is the repeated runs of one implementation, N and rate limit:
// the median of each figure, and the spread of the time to converge.
type summary struct {
	Impl       string
	Kind       string
	StaleCache string
	Baseline   bool
	N          int
	QPS        qpsSetting
	Runs       int
	Converge   time.Duration // median
	Min, Max   time.Duration // the fastest and slowest run
	P50, P99   time.Duration // medians of the runs' per-object percentiles
	Requests   int           // median, watches apart
	Writes     int           // median
	PeakRSS    uint64        // median, bytes
	PeakAnon   uint64        // median, bytes: the anonymous part, sampled
	CPU        time.Duration // median
	ObjectCPU  time.Duration // median: CPU less what was spent before the N objects
	Startup    time.Duration // median
	StartRSS   uint64        // median, bytes: the high-water mark before the N objects
	Deleted    time.Duration // median; Networks only
	// Breakdown is the request counts of the run whose time was the
	// median, watches apart.
	Breakdown requestCounts
	// ClusterCPU is the median of the CPU time the cluster's components
	// spent in each run; Cluster, each component's in the run of median
	// time. Zero and nil where the cluster was not kwok's.
	ClusterCPU time.Duration
	Cluster    map[string]time.Duration
}

// rssPerObject is what each of the N objects added to the process's
// high-water mark, in bytes.
func (s summary) rssPerObject() float64 {
	if s.PeakRSS <= s.StartRSS || s.N == 0 {
		return 0
	}
	return float64(s.PeakRSS-s.StartRSS) / float64(s.N)
}

// cpuPerObject is the CPU time the N objects cost the process, over N: what
// it spent from the first of them until it went quiet, start-up and the
// warm-up object apart.
func (s summary) cpuPerObject() time.Duration {
	if s.N == 0 {
		return 0
	}
	return s.ObjectCPU / time.Duration(s.N)
}

// summarize groups runs by implementation, N and rate limit, in the order
// each group first ran.
func summarize(runs []result, impls []implementation) []summary {
	type key struct {
		impl string
		n    int
		q    qpsSetting
	}
	var order []key
	groups := map[key][]result{}
	for _, r := range runs {
		k := key{r.Impl, r.N, r.QPS}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]summary, 0, len(order))
	for _, k := range order {
		rs := groups[k]
		s := summary{Impl: k.impl, Kind: rs[0].Kind, N: k.n, QPS: k.q, Runs: len(rs)}
		if i := slices.IndexFunc(impls, func(im implementation) bool { return im.name == k.impl }); i >= 0 {
			s.StaleCache, s.Baseline = impls[i].staleCache, impls[i].baseline
		}
		durs := func(f func(result) time.Duration) []time.Duration {
			d := make([]time.Duration, len(rs))
			for i, r := range rs {
				d[i] = f(r)
			}
			return d
		}
		ints := func(f func(result) int) int {
			v := make([]int, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		conv := durs(func(r result) time.Duration { return r.Converge })
		s.Converge = median(conv)
		s.Min, s.Max = slices.Min(conv), slices.Max(conv)
		s.P50 = median(durs(func(r result) time.Duration { return r.P50 }))
		s.P99 = median(durs(func(r result) time.Duration { return r.P99 }))
		s.CPU = median(durs(func(r result) time.Duration { return r.CPU }))
		s.ObjectCPU = median(durs(func(r result) time.Duration { return r.CPU - r.StartCPU }))
		s.Startup = median(durs(func(r result) time.Duration { return r.Startup }))
		s.Deleted = median(durs(func(r result) time.Duration { return r.Deleted }))
		s.Requests = ints(func(r result) int { return r.Requests.Total() })
		s.Writes = ints(func(r result) int { return r.Requests.Writes() })
		s.PeakRSS = uint64(ints(func(r result) int { return int(r.PeakRSS) }))
		s.PeakAnon = uint64(ints(func(r result) int { return int(r.PeakAnon) }))
		s.StartRSS = uint64(ints(func(r result) int { return int(r.StartRSS) }))
		s.ClusterCPU = median(durs(func(r result) time.Duration { return sumCPU(r.Cluster) }))
		for _, r := range rs {
			if r.Converge == s.Converge {
				s.Cluster = r.Cluster
				s.Breakdown = requestCounts{}
				for k, v := range r.Requests {
					if !strings.HasPrefix(k, "watch ") {
						s.Breakdown[k] = v
					}
				}
				break
			}
		}
		out = append(out, s)
	}
	return out
}

// baselineOf names the plain loop that makes the writes impl's controller
// makes: the CustomPod loop for both kinds of pod set.
func baselineOf(kindName string) string {
	if kindName == networks.name {
		return "Network plain loop"
	}
	return "plain loop"
}

// ratio is s's median time over its plain loop's at the same N and rate
// limit, or 0 when that was not measured.
func ratio(s summary, all []summary) float64 {
	if s.Baseline {
		return 0
	}
	i := slices.IndexFunc(all, func(o summary) bool {
		return o.Impl == baselineOf(s.Kind) && o.N == s.N && o.QPS == s.QPS
	})
	if i < 0 || all[i].Converge == 0 {
		return 0
	}
	return s.Converge.Seconds() / all[i].Converge.Seconds()
}

// sumCPU is the CPU time of all the cluster's components.
func sumCPU(m map[string]time.Duration) time.Duration {
	var t time.Duration
	for _, d := range m {
		t += d
	}
	return t
}

// clusterCPUString lists the components, the busiest first.
func clusterCPUString(m map[string]time.Duration) string {
	names := slices.Collect(maps.Keys(m))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.1f s", n, m[n].Seconds())
	}
	return strings.Join(parts, ", ")
}
