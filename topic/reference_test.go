package topic_test

// pitfall selects a known porting mistake for javaMurmur2 to reproduce, so
// that tests can show the vectors tell a faithful port from a broken one.
type pitfall int

const (
	faithful        pitfall = iota
	signExtendBytes         // bytes as Java's signed byte without & 0xff
	arithmeticShift         // >> on a signed int instead of >>>
)

// javaMurmur2 is the test's reference murmur2, written independently of
// Murmur2 and in a different way: Java's int arithmetic is simulated in
// int64 masked to 32 bits, bytes go through int8 and & 0xff as in Java,
// blocks are assembled by index, and the tail is a chain of ifs instead of a
// switch with fallthrough.
func javaMurmur2(data []byte, bug pitfall) int32 {
	const (
		mask = 0xffffffff
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	// Operands are below 2^32, so a product can overflow int64; Go wraps
	// signed overflow, which leaves the low 32 bits of the product intact.
	mul := func(a, b int64) int64 { return (a * b) & mask }
	unsigned := func(b byte) int64 {
		if bug == signExtendBytes {
			return int64(int8(b)) & mask
		}
		return int64(int8(b)) & 0xff
	}
	shr := func(x int64, n uint) int64 {
		if bug == arithmeticShift {
			return (int64(int32(x)) >> n) & mask
		}
		return x >> n
	}

	n := len(data)
	h := (seed ^ int64(n)) & mask
	for i := 0; i < n/4; i++ {
		k := unsigned(data[4*i]) | unsigned(data[4*i+1])<<8 | unsigned(data[4*i+2])<<16 | unsigned(data[4*i+3])<<24
		k &= mask
		k = mul(k, m)
		k ^= shr(k, r)
		k = mul(k, m)
		h = mul(h, m)
		h ^= k
	}
	rem := n % 4
	t := n - rem
	if rem >= 3 {
		h ^= (unsigned(data[t+2]) << 16) & mask
	}
	if rem >= 2 {
		h ^= (unsigned(data[t+1]) << 8) & mask
	}
	if rem >= 1 {
		h ^= unsigned(data[t])
		h = mul(h, m)
	}
	h ^= shr(h, 13)
	h = mul(h, m)
	h ^= shr(h, 15)
	return int32(h)
}
