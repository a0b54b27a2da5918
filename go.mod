module github.com/polyloop/assembly

go 1.26
