package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// The informers' transform leaves the cached objects without managedFields,
// and passes on what is not an object (a tombstone) as it came.
func TestStripManagedFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	got, err := stripManagedFields(pod)
	if err != nil {
		t.Fatal(err)
	}
	if mf := got.(*corev1.Pod).ManagedFields; mf != nil {
		t.Errorf("managedFields = %v, want none cached", mf)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod}
	if got, err := stripManagedFields(tomb); err != nil || got != tomb {
		t.Errorf("a tombstone came back as %v, %v; want it unchanged", got, err)
	}
}
