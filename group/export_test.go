package group

// States returns how many groups c holds a state for.
func States(c *Coordinator) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.mu.groups)
}
