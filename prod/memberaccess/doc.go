// Package memberaccess owns what confines a member agent on the hub: the member's reserved
// namespace (fleet-member-<name>) and the Role and RoleBinding that let the MemberCluster's
// spec.identity read its InternalMemberCluster and Works and write their status there, and
// nothing else (MC-JOIN steps 1 and 2). Objects builds them as data; Ensure writes them.
package memberaccess
