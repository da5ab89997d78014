{
  apiVersion: "pulumi.com/v1",
  kind: "Stack",
  metadata: { name: "reports-production" },
  spec: {
    serviceAccountName: "reports",
    stack: "myorg/reports/production",
    projectRepo: "https://github.com/myorg/reports.git",
    branch: "main",
    refresh: true,
    environment: ["aws-credentials"],
  },
}
