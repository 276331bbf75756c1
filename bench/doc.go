// Package bench compares Strata with other Go logs in the same run, on the
// same disk. It is a module of its own so that the peers it measures never
// become dependencies of Strata's users.
//
//	cd bench && go test -run '^$' -bench . -count 6 | tee new.txt   # then benchstat new.txt
package bench
