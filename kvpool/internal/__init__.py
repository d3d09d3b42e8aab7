"""What the components render and share (Motor's files, pods, RBAC, dashboards, names): not an API, it may change in
any release."""
