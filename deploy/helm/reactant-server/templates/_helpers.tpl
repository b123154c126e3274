{{/* The release's resource name: <release>-reactant-server, capped at 63 characters. */}}
{{- define "reactant-server.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "reactant-server.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The selector labels of the pods. */}}
{{- define "reactant-server.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The image reference, by digest: repository@sha256:<64 hex>. Fails the render on a missing or
malformed digest unless image.allowTag is true, then repository:tag is used.
*/}}
{{- define "reactant-server.image" -}}
{{- $img := .Values.image -}}
{{- if $img.digest -}}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" $img.digest) -}}
{{- fail (printf "image.digest %q is not a digest: expected sha256: followed by 64 lower-case hex digits" $img.digest) -}}
{{- end -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else if and $img.allowTag $img.tag -}}
{{- printf "%s:%s" $img.repository $img.tag -}}
{{- else -}}
{{- fail "image.digest is empty: the chart deploys images by digest only (image.digest: sha256:...); set image.allowTag: true with image.tag to use a tag" -}}
{{- end -}}
{{- end -}}
