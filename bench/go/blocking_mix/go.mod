module crew/bench/blocking_mix

go 1.18
