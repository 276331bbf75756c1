package group_test

import (
	"fmt"

	"github.com/stratalog/strata/group"
)

func ExampleRange() {
	members := []group.Member{
		{ID: "C0", Topics: []string{"t0", "t1"}},
		{ID: "C1", Topics: []string{"t0", "t1"}},
	}
	a := group.Range().Assign(members, map[string]int{"t0": 3, "t1": 3})
	fmt.Println("C0", a["C0"])
	fmt.Println("C1", a["C1"])
	// Output:
	// C0 [t0-0 t0-1 t1-0 t1-1]
	// C1 [t0-2 t1-2]
}

func ExampleRoundRobin() {
	members := []group.Member{
		{ID: "C0", Topics: []string{"t0", "t1"}},
		{ID: "C1", Topics: []string{"t0", "t1"}},
		{ID: "C2", Topics: []string{"t0", "t1"}},
	}
	a := group.RoundRobin().Assign(members, map[string]int{"t0": 1, "t1": 1})
	fmt.Println("C0", a["C0"])
	fmt.Println("C1", a["C1"])
	fmt.Println("C2", a["C2"], "(idle)")
	// Output:
	// C0 [t0-0]
	// C1 [t1-0]
	// C2 [] (idle)
}

func ExampleSticky() {
	partitions := map[string]int{"orders": 6}
	sticky := group.Sticky()

	// Generation 1: three members share six partitions.
	members := []group.Member{
		{ID: "C0", Topics: []string{"orders"}},
		{ID: "C1", Topics: []string{"orders"}},
		{ID: "C2", Topics: []string{"orders"}},
	}
	gen1 := sticky.Assign(members, partitions)
	fmt.Println("gen 1:", gen1["C0"], gen1["C1"], gen1["C2"])

	// Generation 2: C1 leaves. The others report what they own and keep
	// it; only C1's partitions move.
	survivors := []group.Member{
		{ID: "C0", Topics: []string{"orders"}, Owned: gen1["C0"], Generation: 1},
		{ID: "C2", Topics: []string{"orders"}, Owned: gen1["C2"], Generation: 1},
	}
	gen2 := sticky.Assign(survivors, partitions)
	fmt.Println("gen 2:", gen2["C0"], gen2["C2"])
	// Output:
	// gen 1: [orders-0 orders-1] [orders-2 orders-3] [orders-4 orders-5]
	// gen 2: [orders-0 orders-1 orders-2] [orders-3 orders-4 orders-5]
}
