module crew/bench/seed002

go 1.18
