{{/* The labels every object carries, and the Deployment's selector. */}}
{{- define "fleet-hub.labels" -}}
app.kubernetes.io/name: fleet-hub
{{- end }}
