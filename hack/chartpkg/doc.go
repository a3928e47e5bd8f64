// Command chartpkg packages the Helm charts of charts/ for a release: it loads each chart
// directory with the Helm SDK (helm.sh/helm/v3), which checks Chart.yaml and the
// templates' layout, stamps the release's version as the chart's version and appVersion
// (so the image tag defaults to the release), and writes <name>-<version>.tgz, the file
// `helm install` and `helm push` take. `make release` and `make charts` call it.
package main
