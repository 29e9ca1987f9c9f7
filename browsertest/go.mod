module github.com/resilience4cata/r4c/browsertest

go 1.26.0

require github.com/chromedp/chromedp v0.23.0

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
)

replace github.com/resilience4cata/r4c => ../
